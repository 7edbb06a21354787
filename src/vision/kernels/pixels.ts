// The pipeline's hottest pixel loops as WebAssembly (assembly/pixels.ts, built into pixels.wasm
// beside this file by `npm run build:wasm`): the same results bit for bit as the JavaScript they
// replaced (the box means ~3x faster; the bicubic render no faster than V8 made it). One instance
// per thread (the main thread, the edge and detector threads each load their own), compiled
// synchronously when this module is first imported (10 kB).
//
// Buffers: each call copies its inputs into the instance's memory, runs, and copies the outputs
// out; the memory is a bump arena reset at every call (the calls are synchronous, so no two
// overlap on a thread). It grows to the largest call's need and stays so (the halo tables of a
// 600 x 600 photo: 13 MB).
import { readFileSync } from 'node:fs';
import type { AffineMap, Rgb } from '../raw-image.js';
import type { ChannelLuts, UpsampleTaps } from './kernel-types.js';

interface PixelKernels {
  memory: WebAssembly.Memory;
  heapBase(): number;
  boxRows(src: number, width: number, height: number, r: number, tmp: number): void;
  boxColumns(tmp: number, width: number, height: number, r: number, out: number, col: number): void;
  bicubicRgbRows(
    s: number, sw: number, sh: number, srcTop: number,
    ox: number, oy: number, dux: number, duy: number, dvx: number, dvy: number,
    width: number, v0: number, v1: number, fillR: number, fillG: number, fillB: number,
    out: number, inside: number,
  ): void;
  bilinearRgba(
    s: number, sw: number, sh: number,
    ox: number, oy: number, dux: number, duy: number, dvx: number, dvy: number,
    width: number, height: number, fillR: number, fillG: number, fillB: number,
    out: number,
  ): void;
  summedAreaTables(source: number, sc: number, luts: number, output: number, oc: number, alpha: number, inside: number, w: number, h: number, t: number): void;
  sharpenLuma(
    data: number, w: number, h: number, k0: number, k1: number, k2: number,
    m1: number, m2: number, x1: number, y2: number, y3: number, y: number, tmp: number, out: number,
  ): void;
  blendOnBackground(fg: number, luts: number, alpha: number, n: number, bgR: number, bgG: number, bgB: number, out: number): void;
  levelStats(d: number, n: number, weight: number, maxChroma: number, histMin: number, histMax: number, stats: number): void;
  tighten(
    aR: number, aG: number, aB: number, bb: number, lw: number, lh: number,
    R: number, G: number, B: number, w: number, h: number,
    xa: number, xb: number, xt: number, ya: number, yb: number, yt: number,
    lo: number, hi: number, inside: number, skipDecided: boolean,
    decided: number, both: number, slots: number, t: number,
  ): void;
  guidedCoefficients(R: number, G: number, B: number, p: number, w: number, h: number, rl: number, eps: number, out: number, scratch: number): void;
  guidedScratchBytes(w: number, h: number): number;
  foregroundScratchBytes(w: number, h: number): number;
  estimateForeground(
    R: number, G: number, B: number, alpha: number, w: number, h: number, r1: number, r2: number,
    xa: number, xb: number, xt: number, ya: number, yb: number, yt: number, out: number, scratch: number,
  ): number;
  countRing(
    t: number, output: number, oc: number, alpha: number, inside: number, w: number, h: number, ringR: number, r: number,
    minAlpha: number, oldDistance: number, newDistance: number, minShare: number, bgR: number, bgG: number, bgB: number, counts: number,
  ): void;
}


function instantiate(): PixelKernels {
  const bytes = readFileSync(new URL('./pixels.wasm', import.meta.url));
  const instance = new WebAssembly.Instance(new WebAssembly.Module(bytes), {
    env: {
      abort(): never {
        throw new Error('pixel kernel aborted');
      },
    },
  });
  return instance.exports as unknown as PixelKernels;
}

const kernels = instantiate();
const heapStart = (kernels.heapBase() + 15) & ~15;
let top = heapStart;

/** Starts a call's allocations. */
function reset(): void {
  top = heapStart;
}

/** `bytes` of the instance's memory (16-byte aligned), grown when needed. */
function alloc(bytes: number): number {
  const at = top;
  top = (at + bytes + 15) & ~15;
  const have = kernels.memory.buffer.byteLength;
  if (top > have) kernels.memory.grow(Math.ceil((top - have) / 65536));
  return at;
}

/** Copies `data` in; its offset. */
function put(data: ArrayBufferView): number {
  const at = alloc(data.byteLength);
  new Uint8Array(kernels.memory.buffer, at, data.byteLength).set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  return at;
}

function f32(at: number, length: number): Float32Array {
  return new Float32Array(kernels.memory.buffer, at, length);
}

function u8(at: number, length: number): Uint8Array {
  return new Uint8Array(kernels.memory.buffer, at, length);
}

/** The kernels read by the dimensions they are given: a buffer shorter than those is refused, not read past. */
function need(what: string, have: number, bytes: number): void {
  if (have < bytes) throw new RangeError(`${what}: ${have} values for ${bytes}`);
}

/** The three 256-entry tables, one after the other. */
function putLuts(luts: ChannelLuts): number {
  const at = alloc(768);
  const table = u8(at, 768);
  table.set(luts[0], 0);
  table.set(luts[1], 256);
  table.set(luts[2], 512);
  return at;
}

/** boxMean (warp.ts): both passes on a float plane, into out. */
export function boxMeanInto(src: Float32Array, width: number, height: number, r: number, out: Float32Array): void {
  const n = width * height;
  need('boxMean source', src.length, n);
  need('boxMean output', out.length, n);
  reset();
  const s = put(src.length === n ? src : src.subarray(0, n));
  const tmp = alloc(n * 4);
  const o = alloc(n * 4);
  const col = alloc(width * 8);
  kernels.boxRows(s, width, height, r, tmp);
  kernels.boxColumns(tmp, width, height, r, o, col);
  out.set(f32(o, n));
}

/** warpRgbBicubicRows' loop (warp.ts): rows [v0, v1) into out (RGB) and inside. */
export function bicubicRgbRowsInto(
  rows: Uint8Array, sw: number, sh: number, srcTop: number, map: AffineMap,
  width: number, v0: number, v1: number, fill: Rgb, out: Uint8Array, inside: Uint8Array,
): void {
  // warpRgbBicubicRows checked that the rows hold every source row the band reads.
  const n = width * (v1 - v0);
  need('bicubic output', out.length, n * 3);
  reset();
  const s = put(rows);
  const o = alloc(n * 3);
  const ins = alloc(n);
  u8(ins, n).fill(0);
  kernels.bicubicRgbRows(s, sw, sh, srcTop, map.ox, map.oy, map.dux, map.duy, map.dvx, map.dvy, width, v0, v1, fill[0], fill[1], fill[2], o, ins);
  out.set(u8(o, n * 3));
  inside.set(u8(ins, n));
}

/** warpRgbaBilinear's loop (warp.ts): width x height RGBA into out. */
export function bilinearRgbaInto(src: Uint8Array, sw: number, sh: number, map: AffineMap, width: number, height: number, fill: Rgb, out: Uint8Array): void {
  need('bilinear source', src.length, sw * sh * 3);
  need('bilinear output', out.length, width * height * 4);
  reset();
  const s = put(src);
  const o = alloc(width * height * 4);
  kernels.bilinearRgba(s, sw, sh, map.ox, map.oy, map.dux, map.duy, map.dvx, map.dvy, width, height, fill[0], fill[1], fill[2], o);
  out.set(u8(o, width * height * 4));
}

/** The halo measure's parameters (halo.ts): ring and colour-window radii in pixels, thresholds, the new background. */
export interface HaloParams {
  ringR: number;
  r: number;
  minAlpha: number;
  oldDistance: number;
  newDistance: number;
  minShare: number;
  background: Rgb;
}

/**
 * The halo measure (halo.ts): its summed-area tables (source read through `luts`), then the ring
 * and halo pixel counts from them: [ring, halo].
 */
export function haloCounts(
  source: Uint8Array, sc: number, luts: ChannelLuts, output: Uint8Array, oc: number, alpha: Float32Array, inside: Uint8Array, w: number, h: number, p: HaloParams,
): [number, number] {
  const n = w * h;
  need('halo source', source.length, n * sc);
  need('halo output', output.length, n * oc);
  need('halo alpha', alpha.length, n);
  need('halo inside', inside.length, n);
  reset();
  const s = put(source);
  const l = putLuts(luts);
  const o = put(output);
  const a = put(alpha);
  const ins = put(inside);
  const t = alloc((w + 1) * 9 * (h + 1) * 4);
  const counts = alloc(8);
  kernels.summedAreaTables(s, sc, l, o, oc, a, ins, w, h, t);
  kernels.countRing(t, o, oc, a, ins, w, h, p.ringR, p.r, p.minAlpha, p.oldDistance, p.newDistance, p.minShare, p.background[0], p.background[1], p.background[2], counts);
  const c = new Int32Array(kernels.memory.buffer, counts, 2);
  return [c[0], c[1]];
}

/** The unsharp mask on luma (enhance.ts, sharpenLuma): `data` (RGB, w x h) sharpened into out. */
export function sharpenLumaInto(
  data: Uint8Array, w: number, h: number, k: readonly [number, number, number],
  curve: { m1: number; m2: number; x1: number; y2: number; y3: number }, out: Uint8Array,
): void {
  const n = w * h;
  need('sharpen source', data.length, n * 3);
  need('sharpen output', out.length, n * 3);
  reset();
  const d = put(data);
  const y = alloc(n * 4);
  const tmp = alloc(n * 4);
  const o = alloc(n * 3);
  kernels.sharpenLuma(d, w, h, k[0], k[1], k[2], curve.m1, curve.m2, curve.x1, curve.y2, curve.y3, y, tmp, o);
  out.set(u8(o, n * 3));
}

/** The composite (background.ts): fg (RGB) through `luts` over `background` with alpha, into out. */
export function blendOnBackgroundInto(fg: Uint8Array, luts: ChannelLuts, alpha: Float32Array, background: Rgb, out: Uint8Array): void {
  const n = alpha.length;
  need('composite foreground', fg.length, n * 3);
  need('composite output', out.length, n * 3);
  reset();
  const f = put(fg);
  const l = putLuts(luts);
  const a = put(alpha);
  const o = alloc(n * 3);
  kernels.blendOnBackground(f, l, a, n, background[0], background[1], background[2], o);
  out.set(u8(o, n * 3));
}

/**
 * The enhancement's statistics (enhance.ts): min / max channel histograms over the pixels weighing
 * at least 0.5 (all without weights) and stats = [counted, neutral, neutral R, G, B sums].
 */
export function levelStatsInto(d: Uint8Array, n: number, weight: Float32Array | null, maxChroma: number, histMin: Uint32Array, histMax: Uint32Array, stats: Float64Array): void {
  need('statistics pixels', d.length, n * 3);
  if (weight) need('statistics weights', weight.length, n);
  reset();
  const p = put(d.subarray(0, n * 3));
  const w = weight ? put(weight.subarray(0, n)) : 0;
  const hMin = alloc(1024);
  const hMax = alloc(1024);
  const st = alloc(40);
  kernels.levelStats(p, n, w, maxChroma, hMin, hMax, st);
  histMin.set(new Uint32Array(kernels.memory.buffer, hMin, 256));
  histMax.set(new Uint32Array(kernels.memory.buffer, hMax, 256));
  stats.set(new Float64Array(kernels.memory.buffer, st, 5));
}

/** Taps for `length` pixels, or a RangeError. */
function needTaps(what: string, taps: UpsampleTaps, length: number): void {
  need(`${what} taps`, Math.min(taps.i0.length, taps.i1.length, taps.t.length), length);
}

/** Copies the taps in: the offsets of i0, i1 and t. */
function putTaps(taps: UpsampleTaps): [number, number, number] {
  return [put(taps.i0), put(taps.i1), put(taps.t)];
}

/**
 * The guided filter's tightened output (background.ts, combineTightened): the half-resolution
 * coefficient planes [aR, aG, aB, b] (lw x lh), the guide's R, G, B planes (w x h), the taps
 * along x and y, the ramp, `inside` (or none); into t (w x h).
 */
export function tightenInto(
  low: Float32Array[], lw: number, lh: number, I: readonly [Float32Array, Float32Array, Float32Array], w: number, h: number,
  x: UpsampleTaps, y: UpsampleTaps, lo: number, hi: number, inside: Uint8Array | undefined, skipDecided: boolean, t: Float32Array,
): void {
  const ln = lw * lh;
  const n = w * h;
  for (const plane of low) need('tighten coefficients', plane.length, ln);
  for (const plane of I) need('tighten guide', plane.length, n);
  if (inside) need('tighten inside', inside.length, n);
  needTaps('tighten', x, w);
  needTaps('tighten', y, h);
  need('tighten output', t.length, n);
  reset();
  const [aR, aG, aB, bb] = low.map((plane) => put(plane.subarray(0, ln)));
  const [R, G, B] = I.map((plane) => put(plane.subarray(0, n)));
  const [xa, xb, xt] = putTaps(x);
  const [ya, yb, yt] = putTaps(y);
  const ins = inside ? put(inside) : 0;
  const decided = alloc(ln);
  const both = alloc(lw);
  const slots = alloc(2 * 4 * w * 8);
  const out = alloc(n * 4);
  kernels.tighten(aR, aG, aB, bb, lw, lh, R, G, B, w, h, xa, xb, xt, ya, yb, yt, lo, hi, ins, skipDecided, decided, both, slots, out);
  t.set(f32(out, n));
}

/**
 * The colour guided filter's window-averaged linear coefficients at half resolution (background.ts,
 * guidedFilterCoefficients): four planes aR, aG, aB, b of ceil(w / 2) x ceil(h / 2).
 */
export function guidedCoefficients(I: readonly [Float32Array, Float32Array, Float32Array], p: Float32Array, w: number, h: number, rl: number, eps: number): { planes: Float32Array[]; width: number; height: number } {
  const n = w * h;
  for (const plane of [...I, p]) need('guided filter input', plane.length, n);
  const lw = Math.ceil(w / 2);
  const lh = Math.ceil(h / 2);
  const ln = lw * lh;
  reset();
  const [R, G, B, P] = [...I, p].map((plane) => put(plane.subarray(0, n)));
  const out = alloc(4 * ln * 4);
  const scratch = alloc(kernels.guidedScratchBytes(w, h));
  kernels.guidedCoefficients(R, G, B, P, w, h, rl, eps, out, scratch);
  const planes = [0, 1, 2, 3].map((k) => f32(out + k * ln * 4, ln).slice());
  return { planes, width: lw, height: lh };
}

/**
 * Blur fusion's foreground colours (background.ts, estimateForeground): `out` holds the photo's
 * RGB bytes and gets the band's (0 < alpha < 0.999) replaced; I: its R, G, B planes (0..1);
 * r1, r2: the wide (half-resolution) and narrow radii; x, y: the taps from half resolution.
 */
export function estimateForegroundInto(
  I: readonly [Float32Array, Float32Array, Float32Array], alpha: Float32Array, w: number, h: number, r1: number, r2: number,
  x: UpsampleTaps, y: UpsampleTaps, out: Uint8Array,
): void {
  const n = w * h;
  for (const plane of [...I, alpha]) need('foreground input', plane.length, n);
  needTaps('foreground', x, w);
  needTaps('foreground', y, h);
  need('foreground output', out.length, n * 3);
  reset();
  const [R, G, B, A] = [...I, alpha].map((plane) => put(plane.subarray(0, n)));
  const [xa, xb, xt] = putTaps(x);
  const [ya, yb, yt] = putTaps(y);
  const o = put(out);
  const scratch = alloc(kernels.foregroundScratchBytes(w, h));
  kernels.estimateForeground(R, G, B, A, w, h, r1, r2, xa, xb, xt, ya, yb, yt, o, scratch);
  out.set(u8(o, n * 3));
}
