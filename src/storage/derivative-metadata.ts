// What a derivative's stored object says about its render besides its bytes: the quality q=auto
// chose, so a hit answers X-Pictor-Quality without the catalog.
import type { StoredObject } from './storage.js';

const QUALITY = 'pictor-quality';

export function qualityMetadata(quality: number): Record<string, string> {
  return { [QUALITY]: String(quality) };
}

export function chosenQuality(object: StoredObject): number | undefined {
  const value = object.metadata[QUALITY];
  return value === undefined ? undefined : Number(value);
}
