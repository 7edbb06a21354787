// Shapes the pixel kernels take besides images and maps: their own file, so the kernels and the
// modules that call them import it without importing each other.

/** One lookup table per channel (R, G, B), indexed by the 8-bit value. */
export type ChannelLuts = readonly [Uint8Array, Uint8Array, Uint8Array];

/** Bilinear upsampling taps along one axis: output k blends low-resolution i0[k] and i1[k], weight t[k] on the second. */
export interface UpsampleTaps {
  i0: Int32Array;
  i1: Int32Array;
  t: Float64Array;
}
