import type { Catalog } from '../../src/catalog/catalog.js';
import type { ImageChange } from '../../src/catalog/image-changes.js';
import type { Config } from '../../src/config.js';
import type { EncoderSettings } from '../../src/imaging/pipeline.js';
import type { Storage } from '../../src/storage/storage.js';
import type { Logger } from 'pino';
import type { DecodedSourceCache } from '../decoded-source-cache.js';
import type { DerivativeLedger } from '../derivative-ledger.js';
import type { LibvipsThreads } from '../libvips-threads.js';

/** What every processor gets: built once per worker process. */
export interface ProcessorContext {
  config: Config;
  catalog: Catalog;
  storage: Storage;
  log: Logger;
  /** Tells every front door to drop what it cached about a replaced image (best effort). */
  announceImageChange: (change: ImageChange) => Promise<void>;
  /** Runs a render with the libvips threads that fit the jobs running now. */
  libvips: LibvipsThreads;
  /** Records stored derivatives in the catalog in batches, after their jobs have answered. */
  derivatives: DerivativeLedger;
  /** Decoded JPEG originals kept for the next renders of the same original; absent when off. */
  decodedSources?: DecodedSourceCache;
}

/** The encoder settings and render limits every render of a worker uses. */
export function encoderSettings(config: Config): EncoderSettings {
  return {
    avifEffort: config.avifEffort,
    webpEffort: config.webpEffort,
    maxInputPixels: config.maxInputPixels,
    timeoutSeconds: config.renderTimeoutSeconds,
  };
}
