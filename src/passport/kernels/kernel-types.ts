// Shapes the pixel kernels take besides images and maps: their own file, so the kernels and the
// modules that call them import it without importing each other.

/** One lookup table per channel (R, G, B), indexed by the 8-bit value. */
export type ChannelLuts = readonly [Uint8Array, Uint8Array, Uint8Array];

/** The guided filter's linear coefficients at half resolution, window-averaged: q = aR R + aG G + aB B + b. */
export interface LowCoefficients {
  planes: Float32Array[];
  width: number;
  height: number;
}
