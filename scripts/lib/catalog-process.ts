// The embedded catalog of `npm start` in a process of its own, so that it can stop and start
// again without the rest: when its journal fails (a write or fsync failed, e.g. the disk is
// full), memory may hold changes the disk does not, so the process exits and `npm start`
// brings it back from its journal on the same port (as PostgreSQL recovers after a failed WAL
// write). argv: a JSON of EmbeddedCatalogServerOptions. Reports {type:'ready', ...} over IPC.
import { startEmbeddedCatalogServer, type EmbeddedCatalogServerOptions } from '../../src/catalog/embedded-catalog-server.js';

/** Exit status of a catalog that stopped because its journal failed (restarted by the supervisor). */
const JOURNAL_FAILED_EXIT = 75;

const options = JSON.parse(process.argv[2]) as EmbeddedCatalogServerOptions;
const server = await startEmbeddedCatalogServer({
  ...options,
  // After the error replies have gone out.
  onJournalFailure: () => setTimeout(() => process.exit(JOURNAL_FAILED_EXIT), 50),
});
process.send?.({ type: 'ready', url: server.url, port: server.port, loadReport: server.journal?.loadReport, migrated: server.journal?.migrated ?? null });
process.on('SIGTERM', () => {
  void server.stop().then(() => process.exit(0));
});
