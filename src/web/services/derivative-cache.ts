// What the front door knows about stored derivatives: their presence (stat) for a few seconds,
// and the bytes of hot small ones in memory (MEMORY_CACHE_MB, least recently used out first).
//
// A derivative key carries its original's version and every applied parameter, so the bytes
// under a key never change: an entry can only go stale by the derivative being deleted (its
// image deleted or replaced), and a request reaches a key only through an image document, which
// the image cache drops on such a change. Entries are therefore safe to keep; a stale presence
// entry makes the responder's read fail with 404, as a stat would. Only derivatives (keys with
// `&v=`) are kept, never originals (replaced in place), and a missing derivative is looked up
// again on every request.
import { LRUCache } from 'lru-cache';
import { isDerivativeKey } from '../../imaging/params.js';
import type { Storage, StoredObject } from '../../storage/storage.js';

const STAT_TTL_MS = 5_000;
const STAT_MAX = 10_000;
/** One object at most this share of the memory budget (and never above 4 MiB). */
const MAX_OBJECT_SHARE = 16;

interface HotObject {
  object: StoredObject;
  bytes: Buffer;
}

export class DerivativeCache {
  private readonly known = new LRUCache<string, StoredObject>({ max: STAT_MAX, ttl: STAT_TTL_MS });
  /** Sized by bytes; null when MEMORY_CACHE_MB is 0. */
  private readonly memory: LRUCache<string, HotObject> | null;
  private readonly maxObjectBytes: number;

  constructor(
    private readonly storage: Storage,
    memoryMb: number,
  ) {
    const maxBytes = memoryMb * 1024 * 1024;
    this.maxObjectBytes = Math.min(4 * 1024 * 1024, Math.floor(maxBytes / MAX_OBJECT_SHARE));
    this.memory = maxBytes > 0 ? new LRUCache({ maxSize: maxBytes, sizeCalculation: (hot) => Math.max(1, hot.bytes.length) }) : null;
  }

  /** storage.stat for a key, answered from memory or the short-lived presence entries when possible. */
  async stat(key: string): Promise<StoredObject | null> {
    const inMemory = this.memory?.get(key);
    if (inMemory) return inMemory.object;
    const known = this.known.get(key);
    if (known) return known;
    const object = await this.storage.stat(key);
    if (object && isDerivativeKey(key)) this.remember(object);
    return object;
  }

  /** Records a derivative a worker just stored (its result carries the object). */
  remember(object: StoredObject): void {
    this.known.set(object.key, object);
  }

  /**
   * The whole object's bytes when it is a derivative small enough to keep in memory (read from
   * storage and kept on first use); null when it should be streamed instead.
   * Rejects with StorageNotFoundError when the object is gone.
   */
  async bytes(object: StoredObject): Promise<Buffer | null> {
    if (!this.memory) return null;
    const hit = this.memory.get(object.key);
    if (hit) return hit.bytes;
    if (!isDerivativeKey(object.key) || object.size > this.maxObjectBytes) return null;
    const bytes = await this.storage.read(object.key);
    // Sizes disagree only if the object changed under us: serve what was read, keep nothing.
    if (bytes.length !== object.size) return bytes;
    if (!this.memory.has(object.key)) this.memory.set(object.key, { object, bytes });
    return bytes;
  }

  /** The bytes of a derivative kept in memory, or null (one map read: the hit path's look-up). */
  hot(key: string): Buffer | null {
    return this.memory?.get(key)?.bytes ?? null;
  }

  /** Drops a derivative (its bytes turned out to be gone). */
  forget(key: string): void {
    this.known.delete(key);
    this.memory?.delete(key);
  }

  get memoryUse(): { entries: number; bytes: number } {
    return { entries: this.memory?.size ?? 0, bytes: this.memory?.calculatedSize ?? 0 };
  }
}
