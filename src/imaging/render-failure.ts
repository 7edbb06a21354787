// Whether a failed render failed on its input (final: the same bytes fail the same way on every
// attempt) or on the machine (out of memory, a transient libvips or thread-pool error: worth
// another attempt). libvips' messages do not say which, so the input is tried on its own: a
// source that does not decode is the input's fault. The probe costs one decode, on failures only.
import sharp from 'sharp';

export type RenderFailure = 'input' | 'internal';

/** Memory or other resources ran out: never the input's fault, whatever else failed. */
const RESOURCE_EXHAUSTED = /out of memory|ENOMEM|allocation failed|Cannot allocate|too many open files|EMFILE|Resource temporarily unavailable/i;
/** Decided by the request alone (the output's size for its format): the same on every attempt. */
const OUTPUT_REFUSED = /too large for the \w+ format/i;

export async function classifyRenderFailure(err: unknown, source: Buffer, maxInputPixels: number): Promise<RenderFailure> {
  const message = err instanceof Error ? err.message : String(err);
  if (RESOURCE_EXHAUSTED.test(message) || err instanceof RangeError) return 'internal';
  if (OUTPUT_REFUSED.test(message)) return 'input';
  try {
    // The whole image through libvips without keeping it: stats() reads every pixel once.
    await sharp(source, { limitInputPixels: maxInputPixels, failOn: 'error' }).stats();
    return 'internal';
  } catch (probeErr) {
    const probeMessage = probeErr instanceof Error ? probeErr.message : String(probeErr);
    return RESOURCE_EXHAUSTED.test(probeMessage) ? 'internal' : 'input';
  }
}
