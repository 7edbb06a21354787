// Mocha root hooks: one catalog server for the whole run (the embedded CongoDB, or the real
// MongoDB named by MONGO_URL — the suite runs unchanged against either). Each test service gets
// its own database, its own private redis-server and its own storage directory.
import { startEmbeddedCatalogServer, type EmbeddedCatalogServer } from '../../src/catalog/embedded-catalog-server.js';

let embedded: EmbeddedCatalogServer | null = null;
let catalogUrl = process.env.MONGO_URL ?? '';

export function sharedCatalogUrl(): string {
  if (!catalogUrl) throw new Error('catalog not started (root hooks not loaded?)');
  return catalogUrl;
}

/** The shared catalog URL with its own database name. */
export function catalogUrlFor(dbName: string): string {
  const url = new URL(sharedCatalogUrl());
  url.pathname = `/${dbName}`;
  return url.toString();
}

export const mochaHooks = {
  async beforeAll(this: Mocha.Context) {
    this.timeout(30_000);
    if (!catalogUrl) {
      embedded = await startEmbeddedCatalogServer();
      catalogUrl = embedded.url;
    }
  },
  async afterAll() {
    // In parallel mode (mocha --parallel) these hooks run around every file in a worker process
    // that runs several files: the server then lives as long as that process.
    if (process.env.MOCHA_WORKER_ID !== undefined) return;
    await embedded?.stop();
  },
};
