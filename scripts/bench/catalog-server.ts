// The embedded catalog (journaled CongoDB) in its own process, as `npm start` runs it beside the
// web and worker processes: benches that time catalog calls must not share a thread with the
// work they measure. Sends { url } over IPC when it listens; stops on SIGTERM.
// Usage: fork(dist/scripts/bench/catalog-server.js, [dataDir])
import { startEmbeddedCatalogServer } from '../../src/catalog/embedded-catalog-server.js';

const dataDir = process.argv[2];
if (!dataDir) throw new Error('usage: catalog-server.js <dataDir>');
const server = await startEmbeddedCatalogServer({ dataDir, log: { info: () => undefined, warn: () => undefined, error: () => undefined } });
process.send?.({ url: server.url });
process.once('SIGTERM', () => {
  void server.stop().then(() => process.exit(0));
});
