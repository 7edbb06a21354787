// Public ids: '/'-separated segments of letters, digits, '_', '-', '.'; at most 200 characters.
import transliterate from '@sindresorhus/transliterate';
import { randomBytes } from 'node:crypto';
import { ServiceError } from '../../errors.js';

const SEGMENT = /^[A-Za-z0-9_.-]+$/;
export const MAX_PUBLIC_ID = 200;

export function validatePublicId(value: string): string {
  if (value.length === 0 || value.length > MAX_PUBLIC_ID) {
    throw new ServiceError('bad_request', `public_id must be 1 to ${MAX_PUBLIC_ID} characters`);
  }
  for (const segment of value.split('/')) {
    if (segment === '' || segment === '.' || segment === '..' || !SEGMENT.test(segment)) {
      throw new ServiceError('bad_request', 'public_id may contain letters, digits, "_", "-", "." in "/"-separated segments, without empty, "." or ".." segments');
    }
  }
  return value;
}

/** The original file name without extension, transliterated to ASCII and made safe. */
export function publicIdFromFilename(filename: string): string {
  const base = filename.replace(/\\/g, '/').split('/').pop() ?? '';
  const stem = base.includes('.') ? base.slice(0, base.lastIndexOf('.')) : base;
  const ascii = transliterate(stem)
    .replace(/[^A-Za-z0-9_.-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^[-.]+|[-.]+$/g, '')
    .slice(0, MAX_PUBLIC_ID);
  return ascii.length > 0 ? ascii : `image-${randomBytes(4).toString('hex')}`;
}
