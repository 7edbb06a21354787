// A journaled embedded catalog in a process of its own, for tests that SIGKILL it mid-write.
// argv: <dataDir> [compactMinBytes]. Prints one JSON line {"url": ...} once it accepts connections.
import { startEmbeddedCatalogServer } from '../../src/catalog/embedded-catalog-server.js';

const [dataDir, compactMinBytes] = process.argv.slice(2);
const server = await startEmbeddedCatalogServer({ dataDir, compactMinBytes: compactMinBytes ? Number(compactMinBytes) : undefined });
process.stdout.write(JSON.stringify({ url: server.url, loadReport: server.journal?.loadReport }) + '\n');
process.on('SIGTERM', () => {
  void server.stop().then(() => process.exit(0));
});
