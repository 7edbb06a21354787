// Deletes and replacements of images, announced on a Redis channel so that every front door drops
// what it cached about the image at once (src/web/services/image-cache.ts). Pub/sub is
// at-most-once: a subscriber that reconnects clears its whole cache, and entries expire anyway.
import type { Redis } from 'ioredis';

export const IMAGE_CHANGES_CHANNEL = 'pictor:image-changes';

export interface ImageChange {
  imageId: string;
  userId: string;
  publicId: string;
}

/** Best effort: a lost announcement only leaves an entry until its TTL (IMAGE_CACHE_MS). */
export async function announceImageChange(redis: Redis, change: ImageChange): Promise<void> {
  await redis.publish(IMAGE_CHANGES_CHANNEL, JSON.stringify(change)).catch(() => undefined);
}

export function parseImageChange(message: string): ImageChange | null {
  try {
    const v = JSON.parse(message) as Partial<ImageChange>;
    return typeof v.imageId === 'string' && typeof v.userId === 'string' && typeof v.publicId === 'string' ? (v as ImageChange) : null;
  } catch {
    return null;
  }
}
