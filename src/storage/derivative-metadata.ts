// What a derivative's stored object says about its render besides its bytes (the quality q=auto
// chose, remove_bg's no-person), so a hit answers the same response headers as the miss did,
// without the catalog.
import type { StoredObject } from './storage.js';

/** What the render told (the pipeline's RenderNotes). */
export interface RenderNoteValues {
  /** The quality q=auto chose. */
  quality?: number;
  /** remove_bg found no person: `no-person`. */
  removeBg?: string;
}

/** Each note: its key in the stored object's metadata and its response header. */
const NOTES = {
  quality: { metadata: 'pictor-quality', header: 'X-Pictor-Quality' },
  removeBg: { metadata: 'pictor-remove-bg', header: 'X-Pictor-Remove-Bg' },
} as const satisfies Record<keyof RenderNoteValues, { metadata: string; header: string }>;

export function notesMetadata(notes: RenderNoteValues): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, note] of Object.entries(NOTES)) {
    const value = notes[name as keyof RenderNoteValues];
    if (value !== undefined) out[note.metadata] = String(value);
  }
  return out;
}

/** The notes a response's headers carry (the SDK reads them back). */
export function notesFromHeaders(headers: { get(name: string): string | null }): RenderNoteValues {
  const quality = headers.get(NOTES.quality.header);
  const removeBg = headers.get(NOTES.removeBg.header);
  return { ...(quality !== null ? { quality: Number(quality) } : {}), ...(removeBg !== null ? { removeBg } : {}) };
}

/** The response headers a stored derivative's notes give (none for a plain one). */
export function notesHeaders(object: StoredObject): [string, string][] {
  return Object.values(NOTES).flatMap((note): [string, string][] => (object.metadata[note.metadata] === undefined ? [] : [[note.header, object.metadata[note.metadata]]]));
}
