// Image documents the front door looked up, kept IMAGE_CACHE_MS so a hot image costs no catalog
// round trip per request. Only found images are kept (a new upload is visible at once); a delete
// or replacement drops the entry in every front door through the image-changes channel, and a
// lookup that raced with such a change does not store its (possibly stale) answer.
import type { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import { Types } from 'mongoose';
import type { Catalog } from '../../catalog/catalog.js';
import { IMAGE_CHANGES_CHANNEL, parseImageChange, type ImageChange } from '../../catalog/image-changes.js';
import { findImage, findImageById } from '../../catalog/images.js';
import type { ImageDoc } from '../../catalog/models/image.model.js';

const MAX_ENTRIES = 20_000;

export class ImageCache {
  /** Null when IMAGE_CACHE_MS is 0 (off). */
  private readonly entries: LRUCache<string, ImageDoc> | null;
  /** Bumped by every change: a lookup started before one must not store its answer. */
  private generation = 0;

  constructor(
    private readonly catalog: Catalog,
    ttlMs: number,
  ) {
    this.entries = ttlMs > 0 ? new LRUCache({ max: MAX_ENTRIES, ttl: ttlMs }) : null;
  }

  /** The image with this id (and owner, when given), or null. */
  async byId(imageId: string, userId?: string): Promise<ImageDoc | null> {
    if (!Types.ObjectId.isValid(imageId) || String(new Types.ObjectId(imageId)) !== imageId) return null;
    const cached = this.entries?.get(`id:${imageId}`);
    if (cached) return !userId || cached.userId === userId ? cached : null;
    const generation = this.generation;
    const doc = await findImageById(this.catalog, new Types.ObjectId(imageId), userId);
    if (doc) this.store(doc, generation);
    return doc;
  }

  /** The image `publicId` of `userId`, or null. */
  async byRef(userId: string, publicId: string): Promise<ImageDoc | null> {
    const cached = this.entries?.get(refKey(userId, publicId));
    if (cached) return cached;
    const generation = this.generation;
    const doc = await findImage(this.catalog, userId, publicId);
    if (doc) this.store(doc, generation);
    return doc;
  }

  /**
   * A check that `doc` is still the cached document of its image (not dropped by a change, not
   * expired, not re-read); null when the cache is off.
   */
  holds(doc: ImageDoc): (() => boolean) | null {
    const entries = this.entries;
    if (!entries) return null;
    const key = `id:${String(doc._id)}`;
    return () => entries.get(key) === doc;
  }

  /** A check that no image changed since it was made (stored objects reached by key). */
  unchanged(): () => boolean {
    const generation = this.generation;
    return () => this.generation === generation;
  }

  forget(change: ImageChange): void {
    this.generation++;
    this.entries?.delete(`id:${change.imageId}`);
    this.entries?.delete(refKey(change.userId, change.publicId));
  }

  clear(): void {
    this.generation++;
    this.entries?.clear();
  }

  /** Follows the image-changes channel on the front door's subscriber connection (which carries other channels too). */
  async listen(subscriber: Redis): Promise<void> {
    subscriber.on('message', (channel: string, message: string) => {
      if (channel !== IMAGE_CHANGES_CHANNEL) return;
      const change = parseImageChange(message);
      if (change) this.forget(change);
      else this.clear();
    });
    // Messages sent while disconnected are lost: start afresh after every (re)connect.
    subscriber.on('ready', () => this.clear());
    await subscriber.subscribe(IMAGE_CHANGES_CHANNEL);
  }

  private store(doc: ImageDoc, generation: number): void {
    if (generation !== this.generation) return;
    this.entries?.set(`id:${String(doc._id)}`, doc);
    this.entries?.set(refKey(doc.userId, doc.publicId), doc);
  }
}

function refKey(userId: string, publicId: string): string {
  return `ref:${userId}\n${publicId}`;
}
