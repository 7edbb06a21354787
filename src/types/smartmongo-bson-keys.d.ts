// The patched CongoDB helper (patches/) that gives documents their storage key; plain JS upstream.
declare module '@push.rocks/smartmongo/dist_ts/congodb/engine/BsonKeys.js' {
  /** The key under which CongoDB's memory storage files a document with this _id. */
  export function idKey(id: unknown): string;
}
