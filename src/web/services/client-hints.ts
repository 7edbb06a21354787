// Client hints on the keyless /cdn/{id}: a browser that was sent Accept-CH tells its device pixel
// ratio and the layout width of the image, so one URL serves each device the pixels it needs.
import type { Request } from 'express';
import { DPR_RANGE, MAX_SIDE, type TransformRequest } from '../../imaging/params.js';

/** Hints we read (the Sec-CH- names and the older ones some browsers still send). */
export const CLIENT_HINTS = ['Sec-CH-DPR', 'Sec-CH-Width', 'DPR', 'Width'] as const;

/** Hinted widths are rounded up to this step: a bounded number of derivatives per image. */
export const HINT_WIDTH_STEP = 100;

function hintNumber(req: Request, names: string[]): number | undefined {
  for (const name of names) {
    const raw = req.headers[name.toLowerCase()];
    if (typeof raw !== 'string') continue;
    const n = Number(raw.trim());
    if (Number.isFinite(n) && n > 0) return n;
  }
  return undefined;
}

/**
 * The request with the hints applied where the URL is silent: Width (physical pixels) when it
 * names neither w nor h nor dpr; DPR when it names a size but no dpr. `used` lists the hints the
 * answer depends on (for Vary).
 */
export function applyClientHints<T extends TransformRequest>(req: Request, query: T, source: { width: number }): { query: T; used: string[] } {
  if (query.dpr !== undefined) return { query, used: [] };
  if (query.w === undefined && query.h === undefined) {
    const width = hintNumber(req, ['Sec-CH-Width', 'Width']);
    if (width === undefined) return { query, used: ['Sec-CH-Width', 'Width'] };
    const stepped = Math.ceil(width / HINT_WIDTH_STEP) * HINT_WIDTH_STEP;
    return { query: { ...query, w: Math.max(1, Math.min(stepped, source.width, MAX_SIDE)) }, used: ['Sec-CH-Width', 'Width'] };
  }
  const dpr = hintNumber(req, ['Sec-CH-DPR', 'DPR']);
  if (dpr === undefined) return { query, used: ['Sec-CH-DPR', 'DPR'] };
  // Quarter steps within the dpr parameter's range.
  return { query: { ...query, dpr: Math.min(DPR_RANGE.maximum, Math.max(DPR_RANGE.minimum, Math.round(dpr * 4) / 4)) }, used: ['Sec-CH-DPR', 'DPR'] };
}
