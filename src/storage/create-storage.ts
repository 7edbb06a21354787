// Picks the storage driver named by STORAGE_DRIVER; the rest of the code only sees `Storage`.
import type { Config } from '../config.js';
import { GcsStorage } from './gcs-storage.js';
import { LocalStorage } from './local-storage.js';
import type { Storage } from './storage.js';

export function createStorage(config: Config): Storage {
  switch (config.storageDriver) {
    case 'local':
      return new LocalStorage({ rootDir: config.localStorageDir, publicBaseUrl: config.cdnUrl, minFreeBytes: config.maxUploadBytes });
    case 'gcs':
      return new GcsStorage({
        bucket: config.gcsBucket,
        apiEndpoint: config.gcsApiEndpoint,
        projectId: config.gcsProjectId,
        publicBaseUrl: config.cdnUrl,
      });
    default: {
      const unknown: never = config.storageDriver;
      throw new Error(`Unknown storage driver "${String(unknown)}"`);
    }
  }
}
