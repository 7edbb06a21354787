// The decoded-source cache: a worker keeps the decoded pixels of the JPEG originals it rendered
// last, at the shrink-on-load factor each render used, so the next render of the same original at
// the same factor skips the decode (misses of one original come in clusters: a srcset's widths,
// formats, the w=auto byte curve). An original is decoded for the cache on its second render at a
// factor: the first renders the normal way and is only noted, so an original rendered once costs
// what it did without the cache (decoding into memory and rendering from there costs more than the
// streamed render: ~5 ms at 1/2 and ~20 ms at full size for a 2560 px photo, one thread). Bounded
// in bytes (DECODED_SOURCE_CACHE_MB, least recently used out first). An entry serves only the original it was decoded from: it is keyed by storage key,
// version and factor, and its original's bytes must equal the bytes the job read; an original
// seen with another version or other bytes drops every entry kept for it. Concurrent renders
// needing the same entry share one decode.
import { LRUCache } from 'lru-cache';
import { decodeJpegAtShrink } from '../src/imaging/jpeg-shrink-decoder.js';
import type { DecodedSource, DecodedSourceLookup, Size } from '../src/imaging/transform-param.js';

interface Entry {
  sourceKey: string;
  original: Buffer;
  decoded: DecodedSource;
}

/** An entry larger than this share of the budget is not kept (it would push out all the rest). */
const LARGEST_SHARE = 4;
/** Originals (key, version, factor) rendered once and not kept, remembered for their second render. */
const SEEN_ONCE = 10_000;

export class DecodedSourceCache {
  private readonly entries: LRUCache<string, Entry>;
  private readonly keysOf = new Map<string, { version: string; keys: Set<string> }>();
  private readonly decoding = new Map<string, Promise<DecodedSource | undefined>>();
  private readonly seenOnce = new LRUCache<string, true>({ max: SEEN_ONCE });
  private readonly largest: number;

  constructor(
    budgetBytes: number,
    private readonly maxInputPixels: number,
  ) {
    this.largest = Math.floor(budgetBytes / LARGEST_SHARE);
    this.entries = new LRUCache<string, Entry>({
      maxSize: budgetBytes,
      sizeCalculation: (entry) => entry.decoded.tiff.length + entry.original.length,
      // An evicted or deleted entry leaves its original's record; the record goes with its last
      // entry (a replaced value keeps its key: 'set' is not a removal).
      dispose: (entry, key, reason) => {
        const known = this.keysOf.get(entry.sourceKey);
        if (!known || reason === 'set') return;
        known.keys.delete(key);
        if (known.keys.size === 0) this.keysOf.delete(entry.sourceKey);
      },
    });
  }

  /** Bytes held now (pixels and the originals they came from). */
  get bytes(): number {
    return this.entries.calculatedSize;
  }

  /** Originals with pixels kept now. */
  get originals(): number {
    return this.keysOf.size;
  }

  /** The lookup one render of `original` (stored under sourceKey at version) gives the pipeline. */
  lookupFor(sourceKey: string, version: string, original: Buffer): DecodedSourceLookup {
    return (shrink, source) => this.pixels(sourceKey, version, original, shrink, source);
  }

  private async pixels(sourceKey: string, version: string, original: Buffer, shrink: number, source: Size): Promise<DecodedSource | undefined> {
    const scaled = Math.ceil(source.width / shrink) * Math.ceil(source.height / shrink) * 3;
    if (source.width * source.height > this.maxInputPixels || scaled + original.length > this.largest) return undefined;
    const known = this.keysOf.get(sourceKey);
    if (known && known.version !== version) this.dropAll(sourceKey);
    const key = `${sourceKey}\n${version}\n${shrink}`;
    const entry = this.entries.get(key);
    if (entry) {
      if (entry.original.equals(original)) return entry.decoded;
      this.dropAll(sourceKey); // same key and version, other bytes: the original changed in place
    }
    const running = this.decoding.get(key);
    if (running) return running;
    if (!this.seenOnce.has(key)) {
      this.seenOnce.set(key, true);
      return undefined;
    }
    this.seenOnce.delete(key);
    const decoded = decodeJpegAtShrink(original, shrink).then((result) => {
      this.decoding.delete(key);
      if (result) this.keep(key, { sourceKey, original, decoded: result }, version);
      return result;
    });
    this.decoding.set(key, decoded);
    return decoded;
  }

  private keep(key: string, entry: Entry, version: string): void {
    let known = this.keysOf.get(entry.sourceKey);
    if (!known || known.version !== version) {
      if (known) this.dropAll(entry.sourceKey);
      known = { version, keys: new Set() };
      this.keysOf.set(entry.sourceKey, known);
    }
    known.keys.add(key);
    this.entries.set(key, entry);
  }

  private dropAll(sourceKey: string): void {
    const known = this.keysOf.get(sourceKey);
    this.keysOf.delete(sourceKey);
    for (const key of known?.keys ?? []) this.entries.delete(key);
  }
}
