// Adds the TFLITE_METADATA entry that @mediapipe/tasks-vision needs to the legacy MediaPipe models
// shipped in @mediapipe/face_detection and @mediapipe/selfie_segmentation (Apache-2.0). Without it
// the Tasks API rejects them: "Input tensor has type float32: it requires specifying
// NormalizationOptions metadata". Schema-free: only the `flatbuffers` runtime, in memory (~5 ms).
//
// How: a new root `Model` table, a new `buffers` vector (old entries + 1) and a new `metadata`
// vector are written into a region inserted right after the 8-byte file header. Every old byte
// moves by the same multiple of 16, so its internal relative offsets and 16-byte alignment stay valid.
// Field ids (TFLite schema.fbs / metadata_schema.fbs):
//   Model: 0 version, 1 operator_codes, 2 subgraphs, 3 description, 4 buffers, 5 metadata_buffer,
//          6 metadata, 7 signature_defs.  Buffer: 0 data, 1 offset, 2 size.  Metadata: 0 name, 1 buffer.
//   ModelMetadata: 0 name, 2 version, 3 subgraph_metadata, 7 min_parser_version.
//   SubGraphMetadata: 2 input_tensor_metadata, 3 output_tensor_metadata.
//   TensorMetadata: 0 name, 3 content, 4 process_units, 5 stats.
//   Content: 0 content_properties_type (ImageProperties = 2), 1 content_properties.
//   ImageProperties: 0 color_space (RGB = 1).  ProcessUnit: 0 options_type (NormalizationOptions = 1), 1 options.
//   NormalizationOptions: 0 mean, 1 std.  Stats: 0 max, 1 min.
import * as flatbuffers from 'flatbuffers';

export interface ImageModelMetadata {
  name: string;
  /** Input normalization: (pixel - mean) / std. */
  mean: number;
  std: number;
  /** Range of the normalized input. */
  min: number;
  max: number;
  outputs: string[];
}

/** BlazeFace (face_detection_short_range / full_range): RGB in [-1, 1]. */
export const FACE_MODEL_METADATA: ImageModelMetadata = {
  name: 'BlazeFace (legacy @mediapipe/face_detection) + metadata',
  mean: 127.5, std: 127.5, min: -1, max: 1, outputs: ['regressors', 'classificators'],
};
/** Selfie segmentation: RGB in [0, 1]. */
export const SELFIE_MODEL_METADATA: ImageModelMetadata = {
  name: 'Selfie segmentation (legacy @mediapipe/selfie_segmentation) + metadata',
  mean: 0, std: 255, min: 0, max: 1, outputs: ['segmentation'],
};

type Field = [slot: number, kind: 'off' | 'u8', value: number];

export function buildImageModelMetadata(m: ImageModelMetadata): Uint8Array {
  const b = new flatbuffers.Builder(1024);
  const floatVec = (arr: number[]): number => {
    b.startVector(4, arr.length, 4);
    for (let i = arr.length - 1; i >= 0; i--) b.addFloat32(arr[i]);
    return b.endVector();
  };
  const offVec = (offs: number[]): number => {
    b.startVector(4, offs.length, 4);
    for (let i = offs.length - 1; i >= 0; i--) b.addOffset(offs[i]);
    return b.endVector();
  };
  const table = (fields: Field[]): number => {
    b.startObject(8);
    for (const [slot, kind, v] of fields) {
      if (kind === 'off') b.addFieldOffset(slot, v, 0);
      else b.addFieldInt8(slot, v, 0);
    }
    return b.endObject();
  };
  const imageProps = table([[0, 'u8', 1]]); // color_space RGB
  const content = table([[0, 'u8', 2], [1, 'off', imageProps]]);
  const norm = table([[0, 'off', floatVec([m.mean])], [1, 'off', floatVec([m.std])]]);
  const unit = table([[0, 'u8', 1], [1, 'off', norm]]);
  const stats = table([[0, 'off', floatVec([m.max])], [1, 'off', floatVec([m.min])]]);
  const inName = b.createString('image');
  const input = table([[0, 'off', inName], [3, 'off', content], [4, 'off', offVec([unit])], [5, 'off', stats]]);
  const outTensors = m.outputs.map((n) => {
    const s = b.createString(n);
    return table([[0, 'off', s]]);
  });
  const sub = table([[2, 'off', offVec([input])], [3, 'off', offVec(outTensors)]]);
  const nm = b.createString(m.name);
  const ver = b.createString('1');
  const minParser = b.createString('1.0.0');
  const root = table([[0, 'off', nm], [2, 'off', ver], [3, 'off', offVec([sub])], [7, 'off', minParser]]);
  b.finish(root, 'M001');
  return b.asUint8Array().slice();
}

export function addMetadataToTflite(model: Uint8Array, metaBytes: Uint8Array, key = 'TFLITE_METADATA'): Uint8Array {
  const dv = new DataView(model.buffer, model.byteOffset, model.byteLength);
  const u32 = (p: number): number => dv.getUint32(p, true);
  const i32 = (p: number): number => dv.getInt32(p, true);
  const u16 = (p: number): number => dv.getUint16(p, true);
  if (String.fromCharCode(...model.subarray(4, 8)) !== 'TFL3') throw new Error('not a TFLite flatbuffer (no TFL3 identifier)');
  const root = u32(0);
  const vt = root - i32(root);
  const vtSize = u16(vt);
  const field = (tbl: number, vtab: number, i: number): number => {
    const o = 4 + 2 * i < u16(vtab) ? u16(vtab + 4 + 2 * i) : 0;
    return o ? tbl + o : 0;
  };
  const deref = (p: number): number => (p ? p + u32(p) : 0);
  if (vtSize > 4 + 2 * 8) throw new Error('TFLite Model has fields beyond signature_defs; update tflite-metadata.ts');
  const old: number[] = [];
  for (let i = 0; i < 8; i++) old[i] = field(root, vt, i);
  const version = old[0] ? u32(old[0]) : 3;
  const vecElems = (vecPos: number): number[] => {
    if (!vecPos) return [];
    const n = u32(vecPos);
    return Array.from({ length: n }, (_, k) => deref(vecPos + 4 + 4 * k));
  };
  const oldBuffers = vecElems(deref(old[4]));
  for (const bt of oldBuffers) {
    const bvt = bt - i32(bt);
    const off = field(bt, bvt, 1);
    if (off && dv.getBigUint64(off, true) !== 0n) throw new Error('TFLite model uses external buffer offsets; unsupported');
  }
  const oldMeta = vecElems(deref(old[6]));
  for (const m of oldMeta) {
    const mvt = m - i32(m);
    const s = deref(field(m, mvt, 0));
    if (s && new TextDecoder().decode(model.subarray(s + 4, s + 4 + u32(s))) === key) throw new Error(`TFLite model already has ${key}`);
  }

  // Build the inserted region. Positions are absolute in the NEW file; the region starts at 8.
  const chunks: Uint8Array[] = [];
  let pos = 8;
  const bytes = (n: number): Uint8Array => {
    const a = new Uint8Array(n);
    chunks.push(a);
    pos += n;
    return a;
  };
  const align = (n: number, extra = 0): void => {
    const pad = (n - ((pos + extra) % n)) % n;
    if (pad) bytes(pad);
  };
  const w32 = (arr: Uint8Array, off: number, v: number): void => new DataView(arr.buffer).setUint32(off, v >>> 0, true);
  const w16 = (arr: Uint8Array, off: number, v: number): void => new DataView(arr.buffer).setUint16(off, v, true);
  const patches: Array<[at: number, target: (shift: number) => number]> = [];
  const ref = (fromAbs: number, to: (shift: number) => number): void => { patches.push([fromAbs, to]); };
  const shiftedOld = (oldAbs: number) => (shift: number): number => oldAbs + shift;

  // Root vtable + table. Written fields: 0 version, 4 buffers, 6 metadata, and 1,2,3,5,7 copied when present.
  const slots = [0, 1, 2, 3, 4, 5, 6, 7].filter((i) => i === 0 || i === 4 || i === 6 || old[i]);
  const vtPos = pos;
  const vtab = bytes(4 + 2 * 8);
  align(4);
  const tPos = pos;
  const tbl = bytes(4 + 4 * slots.length);
  w16(vtab, 0, 4 + 2 * 8);
  w16(vtab, 2, 4 + 4 * slots.length);
  new DataView(tbl.buffer).setInt32(0, tPos - vtPos, true);
  const fieldPos: Record<number, number> = {};
  slots.forEach((s, k) => {
    w16(vtab, 4 + 2 * s, 4 + 4 * k);
    fieldPos[s] = tPos + 4 + 4 * k;
  });
  w32(tbl, 4 + 4 * slots.indexOf(0), version);
  for (const s of [1, 2, 3, 5, 7]) if (old[s]) ref(fieldPos[s], shiftedOld(deref(old[s])));

  align(4);
  const bufVecPos = pos;
  const bufVec = bytes(4 + 4 * (oldBuffers.length + 1));
  w32(bufVec, 0, oldBuffers.length + 1);
  ref(fieldPos[4], () => bufVecPos);
  oldBuffers.forEach((b, k) => ref(bufVecPos + 4 + 4 * k, shiftedOld(b)));

  align(4);
  const metaVecPos = pos;
  const metaVec = bytes(4 + 4 * (oldMeta.length + 1));
  w32(metaVec, 0, oldMeta.length + 1);
  ref(fieldPos[6], () => metaVecPos);
  oldMeta.forEach((m, k) => ref(metaVecPos + 4 + 4 * k, shiftedOld(m)));

  // New Buffer table {data}
  align(2);
  const bvtPos = pos;
  const bvt = bytes(6);
  w16(bvt, 0, 6); w16(bvt, 2, 8); w16(bvt, 4, 4);
  align(4);
  const btPos = pos;
  const bt = bytes(8);
  new DataView(bt.buffer).setInt32(0, btPos - bvtPos, true);
  ref(bufVecPos + 4 + 4 * oldBuffers.length, () => btPos);

  // New Metadata table {name, buffer}
  align(2);
  const mvtPos = pos;
  const mvt = bytes(8);
  w16(mvt, 0, 8); w16(mvt, 2, 12); w16(mvt, 4, 4); w16(mvt, 6, 8);
  align(4);
  const mtPos = pos;
  const mt = bytes(12);
  new DataView(mt.buffer).setInt32(0, mtPos - mvtPos, true);
  w32(mt, 8, oldBuffers.length); // index of the new buffer
  ref(metaVecPos + 4 + 4 * oldMeta.length, () => mtPos);

  align(4);
  const sPos = pos;
  const keyBytes = new TextEncoder().encode(key);
  const s = bytes(4 + keyBytes.length + 1);
  w32(s, 0, keyBytes.length);
  s.set(keyBytes, 4);
  ref(mtPos + 4, () => sPos);

  // Payload vector, 16-byte aligned data.
  align(16, 4);
  const dPos = pos;
  const d = bytes(4 + metaBytes.length);
  w32(d, 0, metaBytes.length);
  d.set(metaBytes, 4);
  ref(btPos + 4, () => dPos);
  align(16, 8); // (pos - 8) % 16 == 0: old bytes keep their 16-byte alignment
  const shift = pos - 8;

  const result = new Uint8Array(8 + shift + (model.length - 8));
  let o = 8;
  for (const a of chunks) {
    result.set(a, o);
    o += a.length;
  }
  result.set(model.subarray(8), 8 + shift);
  const rdv = new DataView(result.buffer);
  rdv.setUint32(0, tPos, true);
  result.set(model.subarray(4, 8), 4);
  for (const [at, fn] of patches) {
    const target = fn(shift);
    if (target <= at) throw new Error('TFLite metadata writer: backward offset');
    rdv.setUint32(at, target - at, true);
  }
  return result;
}
