// Pixel kernels of the passport pipeline, in AssemblyScript (compiled to kernels.wasm, with its
// bindings, by `npm run build:wasm`). Only kernels measured at least 1.5x faster than the best
// TypeScript or sharp version of their step are here (docs/passport.md, Speed). Arithmetic in f64,
// float32 stores rounded as Float32Array's, 8-bit stores as Uint8ClampedArray's (round half to even,
// clamp). Pointers are byte offsets into this module's memory, which ../pixels.ts fills and reads.
// This entry file lists the exports; the kernels live beside it.

/** Where the caller may place its buffers (after this module's own static data). */
export function heapBase(): usize {
  return __heap_base;
}

export { boxColumns, boxRows } from './common';
export { haloTableBytes, levelStats, ringBlend, summedAreaTables } from './measures';
export { guidedCoefficients, guidedScratchBytes, tighten } from './guided';
export { estimateForeground, foregroundScratchBytes } from './foreground';
