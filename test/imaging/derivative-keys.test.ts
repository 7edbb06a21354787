// Derivative keys and signatures of sample URLs, pinned: a stored derivative is found again only
// when its URL maps to the very same key, and a URL handed out signed keeps verifying only when the
// canonical query is the same. Any change to how a parameter enters the plan, its part of the key or
// the canonical order fails here. Each row: path set, query, Accept, route inputs (the vanity
// path's format, the original's size on a keyless route), then the key and the signature.
import { expect } from 'chai';
import { derivativeKey, resolvePlan, type OutputFormat, type PathSet, type TransformRequest } from '../../src/imaging/params.js';
import { signQuery } from '../../src/imaging/signing.js';
import { setATransformQuery, setBTransformQuery } from '../../src/web/schemas/transform.schemas.js';
import { compile, queryObject } from '../../src/web/validation.js';

type RouteInputs = { pathFormat?: OutputFormat; keyless?: string };
type Row = [PathSet, string, string, RouteInputs, string, string];

const SRC = 'https://cdn.example/u1/images/cat.jpg';
const ROWS: Row[] = [
["A", "w=800", "image/webp", {}, "u1/images/cat.jpg&v=v1&w=800&q=80&f=webp.webp", "Kio6fk1cVl_579mxd3h5dU4kJjs1inJgo1uo8JZsKLA"],
  ["A", "", "", {}, "u1/images/cat.jpg&v=v1&w=1280&h=720&fit=within&q=80&f=webp.webp", "aysvRbs5tW2edsr43mef1JKlFBJ9FN9QXbtnx3kc6yg"],
  ["A", "w=300&h=200&f=jpg&q=70", "image/avif,image/webp", {}, "u1/images/cat.jpg&v=v1&w=300&h=200&fit=cover&q=70&f=jpeg.jpg", "INf0mlCrg0DM5gpyihMm-KYMSYe31uA8JvznkJjYrAo"],
  ["A", "h=480&f=png", "", {}, "u1/images/cat.jpg&v=v1&h=480&q=80&f=png.png", "f-VGhWZPYvlZqQjO5si4T8RgcOdqFnQ96DH273INq_s"],
  ["A", "w=640&dpr=2&f=webp", "", {}, "u1/images/cat.jpg&v=v1&w=1280&q=80&f=webp.webp", "G3Iw9skA5ieveVS1L2yNzl6RsZZiMhZjSC1AzpqgS1s"],
  ["A", "w=500&blur=3.26&sharp=1.24&gamma=1.86&bri=10&con=-20&sat=30&hue=90", "image/avif", {}, "u1/images/cat.jpg&v=v1&w=500&q=80&f=avif&blur=3.5&sharp=1&bri=10&con=-20&sat=30&hue=90&gamma=1.9.avif", "__ifiKx5ZYS6MrUhjYDiJfkYO4D4ahVFLr0fGeCyQlA"],
  ["A", "w=400&h=400&gravity=focal&fx=0.2&fy=0.7", "image/webp", {}, "u1/images/cat.jpg&v=v1&w=400&h=400&fit=cover&q=80&f=webp&gravity=focal&fx=0.2&fy=0.7.webp", "xdbzG4qEpsDyEVbjpHm8AAQvPDgh6GN1ij9ROTucyTU"],
  ["A", "w=400&h=400&gravity=north", "", {}, "u1/images/cat.jpg&v=v1&w=400&h=400&fit=cover&q=80&f=webp&gravity=north.webp", "vc0WK1rZX_BejiWcPK9LB-h0LebIOXxEaCSj5qwgjzw"],
  ["A", "w=400&gravity=entropy", "", {}, "u1/images/cat.jpg&v=v1&w=400&q=80&f=webp.webp", "OLjSBwQm6un1I08FmUGD1Pm1jLPLtnTGtypnj6DR3OM"],
  ["A", "crop=10,20,300,200&rot=90&flip=hv&trim=12&bg=FF8800&pad=5&grayscale=true&f=jpeg", "", {}, "u1/images/cat.jpg&v=v1&w=1280&h=720&fit=within&q=80&f=jpeg&crop=10,20,300,200&rot=90&flip=hv&trim=12&bg=ff8800&pad=5&grayscale=1.jpg", "TfP8LthGV6gPoPX63jtgSUI8BtXxlL5L6zKhQJ3hgfA"],
  ["A", "w=200&rot=0&pad=0&grayscale=false&v=abc123", "image/webp", {}, "u1/images/cat.jpg&v=v1&w=200&q=80&f=webp.webp", "roUTsO-vY-97mNpvumLenhshxqg84hhl-S1tT2VpI_s"],
  ["A", "w=200&preset=thumb", "", {}, "u1/images/cat.jpg&v=v1&w=200&q=80&f=webp.webp", "4yhv0Iqk_DkCal0tn1yVUNvlyZr9p5l_jij3ehT_Brw"],
  ["B", "w=800", "image/webp", {}, "u1/images/cat.jpg&v=v1&w=800&q=80&f=webp.webp", "Kio6fk1cVl_579mxd3h5dU4kJjs1inJgo1uo8JZsKLA"],
  ["B", "", "image/avif", {}, "u1/images/cat.jpg&v=v1&q=80&f=avif.avif", "aysvRbs5tW2edsr43mef1JKlFBJ9FN9QXbtnx3kc6yg"],
  ["B", "w=300&h=200&fit=fill&f=avif", "", {}, "u1/images/cat.jpg&v=v1&w=300&h=200&fit=fill&q=80&f=avif.avif", "IPG7enQN39U8kJ5uZzML1ZUKeGiz9xTXWjkq7MACOxA"],
  ["B", "w=300&fit=cover", "", {}, "u1/images/cat.jpg&v=v1&w=300&q=80&f=jpeg.jpg", "7xwtnKT4E-1PSn_iYJ93ataFTAFYvTC9A2hlwLl8SBI"],
  ["B", "w=300&opt=true", "image/avif,image/webp", {}, "u1/images/cat.jpg&v=v1&w=300&q=auto:good&f=avif&opt=1.avif", "9qIA1C5yMTcuk5o9o0c4QgBjFloz4_lE7E5y6FUBcd0"],
  ["B", "w=300&opt=true", "", {}, "u1/images/cat.jpg&v=v1&w=300&q=auto:good&f=jpeg&opt=1.jpg", "9qIA1C5yMTcuk5o9o0c4QgBjFloz4_lE7E5y6FUBcd0"],
  ["B", "w=300&opt=true&f=png", "", {}, "u1/images/cat.jpg&v=v1&w=300&q=100&f=png&opt=1.png", "79gfS0trOATX7PTvjV7mXU2yuEq_dfUPnZubxtyvc9Y"],
  ["B", "w=300&f=auto", "", {"pathFormat": "png"}, "u1/images/cat.jpg&v=v1&w=300&q=80&f=jpeg.jpg", "NBqHLwXrmtGp0CA9CazABfBbms-W_748SfZ_tMMcQc0"],
  ["B", "w=300", "", {"pathFormat": "png"}, "u1/images/cat.jpg&v=v1&w=300&q=80&f=png.png", "aMIgIEJXrEAjq0CZh-n_ZlMhBoKDv_VCFlUFXaFza8A"],
  ["B", "w=300&opt=true", "", {"pathFormat": "jpeg"}, "u1/images/cat.jpg&v=v1&w=300&q=auto:good&f=jpeg&opt=1.jpg", "9qIA1C5yMTcuk5o9o0c4QgBjFloz4_lE7E5y6FUBcd0"],
  ["B", "w=1000&h=900&dpr=3", "image/webp", {"keyless": "1200x800"}, "u1/images/cat.jpg&v=v1&w=1000&h=900&fit=contain&q=80&f=webp.webp", "BA2Y57rd5DrLGarhfCXnqdt5Raqxh1pVABGEfbCImtw"],
  ["B", "w=100&dpr=2.5", "image/webp", {"keyless": "1200x800"}, "u1/images/cat.jpg&v=v1&w=250&q=80&f=webp.webp", "ausiQ7VpPo_K2Bt9o0VdX1D0iXrbSdpBz33Vp8Ss4JE"],
  ["B", "h=100&dpr=1.5&gravity=focal", "", {"keyless": "1200x800"}, "u1/images/cat.jpg&v=v1&h=150&q=80&f=jpeg.jpg", "AHymrf7i93E2HAgWajNPQFL4PQCSkTxnFG4v4rkd8i4"],
  ["B", "w=300&h=300&fit=cover&gravity=focal", "", {}, "u1/images/cat.jpg&v=v1&w=300&h=300&fit=cover&q=80&f=jpeg&gravity=focal&fx=0.5&fy=0.5.jpg", "VIGDp6PZ2G-VJtTuWlHt9FcM39XzaGX7fTARuA9myOE"],
  ["B", "w=300&h=300&fit=contain&gravity=focal&fx=0.1", "", {}, "u1/images/cat.jpg&v=v1&w=300&h=300&fit=contain&q=80&f=jpeg.jpg", "j3E90MWw-7vDTpgxqSAdGssmffuKNaheLLKSXQJXiX0"],
  ["B", "w=300&h=300&fit=cover&gravity=center", "", {}, "u1/images/cat.jpg&v=v1&w=300&h=300&fit=cover&q=80&f=jpeg.jpg", "ToHkV_g5AwRqDQQ_2CWEE20PDpWZbG39OQqi-jNLEqU"],
  ["B", "w=300&h=300&fit=cover&gravity=attention&bg=abcdef&pad=10", "image/webp", {}, "u1/images/cat.jpg&v=v1&w=300&h=300&fit=cover&q=80&f=webp&gravity=attention&bg=abcdef&pad=10.webp", "kVamZdDhpWi0OnC6FiwW2E1D8BiPM-a2_cBkyPgNTrw"],
  ["B", "blur=0.2&sharp=99.9&gamma=2.96&blur=100", "", {}, "u1/images/cat.jpg&v=v1&q=80&f=jpeg&blur=100&sharp=100&gamma=3.jpg", "sjGNK_CPa4kEQ1Pk_y7Hr1ulqNV9ny6tel-y8Cz0580"],
  ["A", "w=1200&q=auto&f=webp", "", {}, "u1/images/cat.jpg&v=v1&w=1200&q=auto:good&f=webp.webp", "a6a8EYt3U7UBzBr_q6DPe5D86MvOy6Jnvn7NWr04F2M"],
  ["A", "w=1200&q=auto:eco&f=jpeg", "", {}, "u1/images/cat.jpg&v=v1&w=1200&q=auto:eco&f=jpeg.jpg", "4c60TcWxl6GtJfR5SZYxT-Z8jtZN6_r4X1GBUfmOPeg"],
  ["B", "w=300&q=auto:best", "image/avif", {}, "u1/images/cat.jpg&v=v1&w=300&q=auto:best&f=avif.avif", "2GOM9m5l5OtEXmfgC-oEkw0LDQYiWQQP4Ug_QdIH0wU"],
  ["B", "w=300&q=auto&f=png", "", {}, "u1/images/cat.jpg&v=v1&w=300&q=80&f=png.png", "yQNYGZj1FUZ3X2iIp6iPFo50Sm00M6hJACXqzuisSNI"],
  ["B", "w=300&q=auto:best&opt=true", "", {}, "u1/images/cat.jpg&v=v1&w=300&q=auto:best&f=jpeg&opt=1.jpg", "u3N0KJj-uNvnwt7QNu5XIwIaJ6Njy3wsVnzMpL2f7Ks"],
  ["B", "w=300&blur_faces=10.2&f=jpeg", "", {}, "u1/images/cat.jpg&v=v1&w=300&q=80&f=jpeg&blur_faces=10.jpg", "fr2TRQIUPW_shsyIFW-AxTrPPma9OaLOlBzhJNiq6U4"],
  ["B", "w=300&pixelate_faces=12&q=auto&f=webp", "", {}, "u1/images/cat.jpg&v=v1&w=300&q=auto:good&f=webp&pixelate_faces=12.webp", "SiB-WjfeNQrv1sXUDflc4dic-5OT8Rf6HX3_1Si7JFs"],
  ["B", "w=300&remove_bg=true&f=png", "", {}, "u1/images/cat.jpg&v=v1&w=300&q=80&f=png&remove_bg=1.png", "vcrV0NJ8aPUt7Bx5z37VRfjzVsh141CTK2d3hHkxO2Q"],
  ["A", "w=300&remove_bg=true&q=auto&f=jpeg", "", {}, "u1/images/cat.jpg&v=v1&w=300&q=auto:good&f=jpeg&remove_bg=1.jpg", "HGUZljgEZOk8-vBH14hKeLush4r4cE5Ii4LW5gl0RU0"],
  ["B", "w=4200&h=4200&q=100&f=jpg", "", {}, "u1/images/cat.jpg&v=v1&w=4200&h=4200&fit=contain&q=100&f=jpeg.jpg", "C4OwcSg0G9hYEzCAqD1BOHPGx1Ksxu6_J8gZrR5aD6E"],
];

const schemas = { A: compile<TransformRequest & { src: string }>(setATransformQuery), B: compile<TransformRequest & { src: string }>(setBTransformQuery) };

function keyOf(set: PathSet, query: string, accept: string, inputs: RouteInputs): string {
  const raw: Record<string, string> = { src: SRC };
  for (const [k, v] of new URLSearchParams(query)) raw[k] = v;
  const checked = schemas[set].check(queryObject(raw), 'query');
  if (!checked.ok) throw new Error(`${query}: ${JSON.stringify(checked.issues)}`);
  const [width, height] = (inputs.keyless ?? '').split('x').map(Number);
  const { plan } = resolvePlan(set, checked.value, { accept, sourceFormat: 'jpeg', preferWebpWhenUnsure: set === 'A', pathFormat: inputs.pathFormat }, inputs.keyless ? { dprCapSource: { width, height } } : {});
  return derivativeKey('u1/images/cat.jpg', 'v1', plan);
}

describe('derivative keys and signatures of sample URLs', () => {
  for (const [set, query, accept, inputs, key, signature] of ROWS) {
    it(`set ${set} ?${query} (Accept: ${accept || 'none'}${inputs.pathFormat ? `, path .${inputs.pathFormat}` : ''}${inputs.keyless ? `, keyless on ${inputs.keyless}` : ''})`, () => {
      expect(keyOf(set, query, accept, inputs)).to.equal(key);
      const raw: Record<string, string> = { src: SRC, kid: 'k1' };
      for (const [k, v] of new URLSearchParams(query)) raw[k] = v;
      expect(signQuery(raw, 'secret')).to.equal(signature);
    });
  }

  it('a watermark names its image, version, place, opacity and scale after every other parameter', () => {
    const { plan } = resolvePlan('B', { w: 100 }, { accept: '', sourceFormat: 'png', preferWebpWhenUnsure: false });
    plan.watermark = { imageId: '0123456789abcdef01234567', sourceKey: 'u1/images/logo.png', version: 'v9', gravity: 'northwest', opacity: 30, scale: 0.4 };
    expect(derivativeKey('u1/images/cat.jpg', 'v1', plan)).to.equal('u1/images/cat.jpg&v=v1&w=100&q=80&f=png&wm=0123456789abcdef01234567.v9&wm_gravity=northwest&wm_opacity=30&wm_scale=0.4.png');
  });
});
