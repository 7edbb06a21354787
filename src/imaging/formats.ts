// Image formats: the four we accept and produce, their file extensions and MIME types, and the
// negotiation of f=auto from the Accept header.

export type OutputFormat = 'jpeg' | 'png' | 'webp' | 'avif';

/** Upload types accepted (by their bytes): the four formats we can also produce. */
export const ACCEPTED_UPLOAD_MIME = ['image/jpeg', 'image/png', 'image/webp', 'image/avif'] as const;

export const FORMAT_EXTENSION: Record<OutputFormat, string> = { jpeg: 'jpg', png: 'png', webp: 'webp', avif: 'avif' };
export const FORMAT_MIME: Record<OutputFormat, string> = { jpeg: 'image/jpeg', png: 'image/png', webp: 'image/webp', avif: 'image/avif' };

export function formatFromExtension(ext: string): OutputFormat | undefined {
  switch (ext.toLowerCase()) {
    case 'jpg':
    case 'jpeg':
      return 'jpeg';
    case 'png':
      return 'png';
    case 'webp':
      return 'webp';
    case 'avif':
      return 'avif';
    default:
      return undefined;
  }
}

export interface NegotiationContext {
  accept: string;
  /** Format of the stored original. */
  sourceFormat: OutputFormat;
  /** Set A JSON callers default to WebP (the spec's default content_type). */
  preferWebpWhenUnsure: boolean;
  /** Format implied by a vanity path extension (set B /image/{path}). */
  pathFormat?: OutputFormat;
  hasAlpha?: boolean;
}

export function acceptsMime(accept: string, mime: string): boolean {
  return accept
    .toLowerCase()
    .split(',')
    .some((part) => part.trim().split(';')[0] === mime);
}

/** f=auto (and opt): AVIF when accepted, else WebP, else the source format. */
export function negotiateFormat(ctx: NegotiationContext): OutputFormat {
  if (acceptsMime(ctx.accept, 'image/avif')) return 'avif';
  if (acceptsMime(ctx.accept, 'image/webp') || ctx.preferWebpWhenUnsure) return 'webp';
  return ctx.sourceFormat;
}
