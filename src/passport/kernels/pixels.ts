// The passport pipeline's pixel kernels that earn WebAssembly (assembly/pixels.ts, built into
// kernels.wasm beside this file by `npm run build:wasm`, which also generates kernels.js and its
// typings: the exports' signatures are not restated here). One instance per thread (the main and
// the edge thread each load their own) when this module is first imported (~8 kB).
//
// Buffers: each call copies its inputs into the instance's memory, runs, and copies the outputs
// out; the memory is a bump arena reset at every call (the calls are synchronous, so no two
// overlap on a thread). It grows to the largest call's need and stays so (the halo tables of a
// 600 x 600 photo: 25 MB).
import { readFileSync } from 'node:fs';
import { instantiate } from './kernels.js';
import type { Rgb } from '../../vision/raw-image.js';

/** One lookup table per channel (R, G, B), indexed by the 8-bit value. */
export type ChannelLuts = readonly [Uint8Array, Uint8Array, Uint8Array];

/** The guided filter's linear coefficients at half resolution, window-averaged: q = aR R + aG G + aB B + b. */
export interface LowCoefficients {
  planes: Float32Array[];
  width: number;
  height: number;
}

const kernels = await instantiate(await WebAssembly.compile(readFileSync(new URL('./kernels.wasm', import.meta.url))), {
  env: {
    abort(): never {
      throw new Error('pixel kernel aborted');
    },
  },
});
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

/** boxMean (background.ts): both passes on a float plane, into out. */
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

/** The halo measure's parameters (halo.ts): ring and colour-window radii in pixels, thresholds, the new background. */
export interface HaloParams {
  ringR: number;
  r: number;
  minAlpha: number;
  explained: number;
  minShare: number;
  background: Rgb;
}

/**
 * The halo measure (halo.ts): its summed-area tables (source read through `luts`), then each ring
 * pixel's share of the old background (-1 off the ring).
 */
export function haloBlend(
  source: Uint8Array, sc: number, luts: ChannelLuts, output: Uint8Array, oc: number, alpha: Float32Array, inside: Uint8Array, w: number, h: number, p: HaloParams,
): Float32Array {
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
  const t = alloc(kernels.haloTableBytes(w, h));
  const blend = alloc(n * 4);
  kernels.summedAreaTables(s, sc, l, o, oc, a, ins, w, h, p.ringR, t);
  kernels.ringBlend(t, o, oc, a, ins, w, h, p.ringR, p.r, p.minAlpha, p.explained, p.minShare, p.background[0], p.background[1], p.background[2], blend);
  return f32(blend, n).slice();
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

/**
 * Bilinear taps from the half-resolution grid (2x2 means) back to full resolution along one axis:
 * output pixel k of `length` blends source pixels i0[k] and i1[k] of `lowLength`, with weight
 * t[k] on the second; copied in (their offsets).
 */
function putUpsampleTaps(length: number, lowLength: number): [number, number, number] {
  const i0 = new Int32Array(length);
  const i1 = new Int32Array(length);
  const t = new Float64Array(length);
  for (let k = 0; k < length; k++) {
    const f = Math.min(lowLength - 1, Math.max(0, (k + 0.5) / 2 - 0.5));
    i0[k] = Math.floor(f);
    i1[k] = Math.min(lowLength - 1, i0[k] + 1);
    t[k] = f - i0[k];
  }
  return [put(i0), put(i1), put(t)];
}

/** The tightening ramp [low, high]; where the probability read is below `unsureBelow` it starts at `unsureLow` (>= low). */
export interface TighteningRamp { low: number; high: number; unsureBelow: number; unsureLow: number }

/**
 * The guided filter's tightened output (background.ts, refineMask) into t (w x h), from the half-resolution
 * coefficients, the guide's planes, the ramp, the probability read from row `fromRow` on and `inside` (or none).
 */
export function tightenInto(
  low: LowCoefficients, I: readonly [Float32Array, Float32Array, Float32Array], w: number, h: number,
  ramp: TighteningRamp, unsure: { prob: Float32Array; fromRow: number } | undefined, inside: Uint8Array | undefined, skipDecided: boolean, t: Float32Array,
): void {
  const { width: lw, height: lh } = low;
  const ln = lw * lh;
  const n = w * h;
  for (const plane of low.planes) need('tighten coefficients', plane.length, ln);
  for (const plane of I) need('tighten guide', plane.length, n);
  if (inside) need('tighten inside', inside.length, n);
  if (unsure) need('tighten prob', unsure.prob.length, n);
  need('tighten output', t.length, n);
  reset();
  const [aR, aG, aB, bb] = low.planes.map((plane) => put(plane.subarray(0, ln)));
  const [R, G, B] = I.map((plane) => put(plane.subarray(0, n)));
  const [xa, xb, xt] = putUpsampleTaps(w, lw);
  const [ya, yb, yt] = putUpsampleTaps(h, lh);
  const ins = inside ? put(inside) : 0;
  const decided = alloc(ln);
  const both = alloc(lw);
  const slots = alloc(2 * 4 * w * 8);
  const out = alloc(n * 4);
  kernels.tighten(aR, aG, aB, bb, lw, lh, R, G, B, w, h, xa, xb, xt, ya, yb, yt, ramp.low, ramp.high, unsure ? put(unsure.prob) : 0, unsure ? Math.max(0, unsure.fromRow) * w : 0, ramp.unsureBelow, Math.max(ramp.low, ramp.unsureLow), ins, skipDecided, decided, both, slots, out);
  t.set(f32(out, n));
}

/**
 * The colour guided filter's window-averaged linear coefficients at half resolution (background.ts,
 * guidedFilterCoefficients): four planes aR, aG, aB, b of ceil(w / 2) x ceil(h / 2).
 */
export function guidedCoefficients(I: readonly [Float32Array, Float32Array, Float32Array], p: Float32Array, w: number, h: number, rl: number, eps: number): LowCoefficients {
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
 * r1, r2: the wide (half-resolution) and narrow radii.
 */
export function estimateForegroundInto(
  I: readonly [Float32Array, Float32Array, Float32Array], alpha: Float32Array, w: number, h: number, r1: number, r2: number, out: Uint8Array,
): void {
  const n = w * h;
  for (const plane of [...I, alpha]) need('foreground input', plane.length, n);
  need('foreground output', out.length, n * 3);
  reset();
  const [R, G, B, A] = [...I, alpha].map((plane) => put(plane.subarray(0, n)));
  const [xa, xb, xt] = putUpsampleTaps(w, Math.ceil(w / 2));
  const [ya, yb, yt] = putUpsampleTaps(h, Math.ceil(h / 2));
  const o = put(out);
  const scratch = alloc(kernels.foregroundScratchBytes(w, h));
  kernels.estimateForeground(R, G, B, A, w, h, r1, r2, xa, xb, xt, ya, yb, yt, o, scratch);
  out.set(u8(o, n * 3));
}
