// Inputs made to fail (or pass) the face checks, derived from a portrait and its detected face:
// glasses drawn over the eyes, closed eyes, a hat, a cut crown or chin, a half-shadowed face, an
// open mouth, a dark noisy copy. Drawn with SVG overlays and sharp, sized from the eye distance.
import sharp from 'sharp';
import type { DetectedFace } from '../../src/vision/face-detector.js';

export type Variant =
  | 'clean'
  | 'clear_glasses'
  | 'dark_glasses'
  | 'closed_eyes'
  | 'hat'
  | 'cut_crown'
  | 'cut_chin'
  | 'shadow_left'
  | 'shadow_bottom'
  | 'open_mouth'
  | 'dark_noisy';

interface Geometry {
  width: number;
  height: number;
  face: DetectedFace;
  /** Hand-labelled crown and chin rows (source pixels). */
  crownY: number;
  chinY: number;
}

function svg(width: number, height: number, body: string): Buffer {
  return Buffer.from(`<svg width="${width}" height="${height}" xmlns="http://www.w3.org/2000/svg">${body}</svg>`);
}

/** Deterministic noise (LCG) so a test's input is the same on every run. */
function noisy(data: Buffer, sigma: number, seed = 12345): Buffer {
  let s = seed >>> 0;
  const rnd = (): number => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
  const out = Buffer.alloc(data.length);
  for (let i = 0; i < data.length; i++) {
    // sum of 3 uniforms ~ normal, std 0.5 -> scaled to sigma
    const g = (rnd() + rnd() + rnd() - 1.5) * 2 * sigma;
    out[i] = Math.max(0, Math.min(255, Math.round(data[i] + g)));
  }
  return out;
}

export async function makeVariant(input: Buffer, g: Geometry, v: Variant): Promise<Buffer> {
  const { width: W, height: H } = g;
  const k = g.face.keypoints;
  const d = Math.hypot(k.leftEye.x - k.rightEye.x, k.leftEye.y - k.rightEye.y);
  const ex = (k.leftEye.x + k.rightEye.x) / 2;
  const ey = (k.leftEye.y + k.rightEye.y) / 2;
  const base = sharp(input).removeAlpha();
  const png = (img: ReturnType<typeof sharp>): Promise<Buffer> => img.png().toBuffer();
  const overlay = (body: string): Promise<Buffer> => png(base.clone().composite([{ input: svg(W, H, body) }]));
  const rx = 0.38 * d;
  const ry = 0.26 * d;
  switch (v) {
    case 'clean':
      return png(base.clone());
    case 'clear_glasses':
    case 'dark_glasses': {
      const fill = v === 'dark_glasses' ? 'fill="#141414" fill-opacity="0.95"' : 'fill="none"';
      const sw = Math.max(2, 0.06 * d);
      const lens = (x: number, y: number): string => `<ellipse cx="${x}" cy="${y}" rx="${rx}" ry="${ry}" ${fill} stroke="#202020" stroke-width="${sw}"/>`;
      const bridge = `<path d="M ${k.rightEye.x + rx} ${ey - 0.05 * d} Q ${ex} ${ey - 0.2 * d} ${k.leftEye.x - rx} ${ey - 0.05 * d}" fill="none" stroke="#202020" stroke-width="${sw}"/>`;
      const arms = `<line x1="${k.rightEye.x - rx}" y1="${ey - 0.05 * d}" x2="${k.rightEye.x - 0.9 * d}" y2="${ey - 0.1 * d}" stroke="#202020" stroke-width="${sw}"/>` +
        `<line x1="${k.leftEye.x + rx}" y1="${ey - 0.05 * d}" x2="${k.leftEye.x + 0.9 * d}" y2="${ey - 0.1 * d}" stroke="#202020" stroke-width="${sw}"/>`;
      return overlay(lens(k.rightEye.x, k.rightEye.y) + lens(k.leftEye.x, k.leftEye.y) + bridge + arms);
    }
    case 'closed_eyes': {
      // Eyelids: the eye regions covered with the cheek's colour, a lash line across.
      const { data, info } = await base.clone().raw().toBuffer({ resolveWithObject: true });
      const px = (x: number, y: number): string => {
        const j = (Math.round(y) * info.width + Math.round(x)) * info.channels;
        return `rgb(${data[j]},${data[j + 1]},${data[j + 2]})`;
      };
      const lid = (x: number, y: number): string =>
        `<ellipse cx="${x}" cy="${y}" rx="${0.3 * d}" ry="${0.15 * d}" fill="${px(x, y + 0.5 * d)}"/>` +
        `<path d="M ${x - 0.28 * d} ${y} Q ${x} ${y + 0.08 * d} ${x + 0.28 * d} ${y}" fill="none" stroke="${px(x, y + 0.75 * d)}" stroke-width="${Math.max(1, 0.03 * d)}"/>`;
      return overlay(lid(k.rightEye.x, k.rightEye.y) + lid(k.leftEye.x, k.leftEye.y));
    }
    case 'hat': {
      // A dark blue hat from above the crown to the brows, with a brim wider than the head.
      const top = Math.max(0, g.crownY - 0.25 * d);
      const brim = ey - 0.72 * d;
      return overlay(
        `<rect x="${ex - 1.05 * d}" y="${top}" width="${2.1 * d}" height="${brim - top}" rx="${0.3 * d}" fill="#1d2c6b"/>` +
          `<rect x="${ex - 1.45 * d}" y="${brim - 0.18 * d}" width="${2.9 * d}" height="${0.22 * d}" rx="${0.08 * d}" fill="#16204f"/>`,
      );
    }
    case 'cut_crown': {
      // The input starts a third of the way from the crown to the eyes: the top of the head is cut off.
      const top = Math.round(g.crownY + 0.35 * (ey - g.crownY));
      return png(base.clone().extract({ left: 0, top, width: W, height: H - top }));
    }
    case 'cut_chin': {
      const bottom = Math.round(g.chinY - 0.25 * (g.chinY - k.mouth.y));
      return png(base.clone().extract({ left: 0, top: 0, width: W, height: bottom }));
    }
    case 'shadow_left':
    case 'shadow_bottom': {
      // Multiply by a soft shadow: the image-left half of the face (or its lower half) at 40 %.
      const grad = v === 'shadow_left'
        ? `<linearGradient id="s" x1="${ex - 0.15 * d}" x2="${ex + 0.15 * d}" y1="0" y2="0" gradientUnits="userSpaceOnUse"><stop offset="0" stop-color="#666"/><stop offset="1" stop-color="#fff"/></linearGradient>`
        : `<linearGradient id="s" x1="0" x2="0" y1="${ey + 0.25 * d}" y2="${ey + 0.5 * d}" gradientUnits="userSpaceOnUse"><stop offset="0" stop-color="#fff"/><stop offset="1" stop-color="#666"/></linearGradient>`;
      const mask = await sharp(svg(W, H, `<defs>${grad}</defs><rect width="${W}" height="${H}" fill="url(#s)"/>`)).removeAlpha().png().toBuffer();
      return png(base.clone().composite([{ input: mask, blend: 'multiply' }]));
    }
    case 'open_mouth':
      return overlay(
        `<ellipse cx="${k.mouth.x}" cy="${k.mouth.y + 0.05 * d}" rx="${0.32 * d}" ry="${0.17 * d}" fill="#2a0a0a"/>` +
          `<rect x="${k.mouth.x - 0.22 * d}" y="${k.mouth.y - 0.1 * d}" width="${0.44 * d}" height="${0.07 * d}" fill="#f0f0ea"/>`,
      );
    case 'dark_noisy': {
      // Under-exposed (x 0.38) with sensor-like noise (sigma 7): face luma ~60-70.
      const { data, info } = await base.clone().linear(0.38, 0).raw().toBuffer({ resolveWithObject: true });
      return sharp(noisy(data, 7), { raw: { width: info.width, height: info.height, channels: info.channels } }).jpeg({ quality: 90 }).toBuffer();
    }
  }
}
