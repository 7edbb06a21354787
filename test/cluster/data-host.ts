// The data host's own services besides redis-server: the embedded catalog (journaled to disk) and
// the storage service, which is the project's GCS protocol fake (no GCS emulator can run here),
// both bound to the data host's internal address so that every other host reaches them over a link.
// Usage: node data-host.js <address> <catalogPort> <gcsPort> <catalogDir> <bucket>
import { Storage as GcsClient } from '@google-cloud/storage';
import { startEmbeddedCatalogServer } from '../../src/catalog/embedded-catalog-server.js';
import { startFakeGcs } from '../fixtures/fake-gcs-server.js';

const [address, catalogPort, gcsPort, catalogDir, bucket] = process.argv.slice(2);
const catalog = await startEmbeddedCatalogServer({ host: address, port: Number(catalogPort), dataDir: catalogDir });
const gcs = await startFakeGcs({ host: address, port: Number(gcsPort) });
await new GcsClient({ apiEndpoint: gcs.endpoint, projectId: 'pictor-cluster', useAuthWithCustomEndpoint: false }).createBucket(bucket);
process.send?.({ type: 'ready', catalogUrl: catalog.url, gcsEndpoint: gcs.endpoint });
