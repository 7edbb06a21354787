// The write concern every catalog connection uses: acknowledged only once the write is in the
// server's on-disk journal (j) and, on a replica set, on a majority of its members. A standalone
// mongod accepts w: "majority" and then acknowledges after its own journal write. The embedded
// catalog acknowledges after its journal sync whatever the client asks (docs/durability.md).
import type { mongo } from 'mongoose';

/** Waiting longer than this for a majority fails the operation (the write may still apply). */
export const MAJORITY_TIMEOUT_MS = 10_000;

const EXPLICIT_OPTION = /[?&](w|journal|j|wtimeoutMS)=/i;

/**
 * The default write concern, or undefined when the URL names its own (w, journal, wtimeoutMS):
 * an operator's explicit choice wins.
 */
export function catalogWriteConcern(url: string): mongo.WriteConcernSettings | undefined {
  if (EXPLICIT_OPTION.test(url)) return undefined;
  return { w: 'majority', journal: true, wtimeoutMS: MAJORITY_TIMEOUT_MS };
}
