// How far V8 lets the old generation grow past the live heap before the next full GC. V8 picks
// the factor itself from its GC and allocation speeds; under a steady stream of uploads it fell
// to its floor (~1.1×): a front door with ~40 MB live ran a full mark-compact every 100-150 ms,
// 40 % of its CPU in GC (measured with --trace-gc and perf on the bench machine, after a run of
// cache misses). A fixed 2× (100 %) kept it to a few per minute: uploads 88-107 → 137-149 per
// second in the same sequence, for at most one more live heap's worth of RSS per process.
import v8 from 'node:v8';

/** Applies HEAP_GROWING_PERCENT to this process (0 leaves V8's dynamic factor). Call at start. */
export function applyHeapGrowth(percent: number): void {
  if (percent > 0) v8.setFlagsFromString(`--heap-growing-percent=${Math.round(percent)}`);
}
