// npm run catalog -- <command>: maintenance of the catalog.
//   salvage [dir]  keep every readable record of a damaged embedded-catalog journal, set the
//                  damaged bytes aside and say what was lost (docs/durability.md). The directory
//                  defaults to $DATA_DIR/catalog (./data/catalog); run it with the service stopped.
//   reconcile      bring the catalog (MONGO_URL) and storage back in step after a crash, as
//                  `npm start` does at every start: for deployments whose front doors and workers
//                  start on their own (Procfile, docker-compose). Run it before they start.
import path from 'node:path';
import { Catalog } from '../src/catalog/catalog.js';
import { describeSalvage, salvageJournal } from '../src/catalog/journal/salvage.js';
import { loadConfigOrExit } from '../src/config.js';
import { reconcileAtStart } from './lib/reconcile-at-start.js';

const [command, dirArg] = process.argv.slice(2);
const say = (line: string) => process.stdout.write(line + '\n');

async function reconcile(): Promise<void> {
  const config = loadConfigOrExit();
  const catalog = await Catalog.connect(config.mongoUrl);
  try {
    await reconcileAtStart(catalog, config, say);
  } finally {
    await catalog.close();
  }
}

async function salvage(): Promise<void> {
  const dir = path.resolve(dirArg ?? path.join(process.env.DATA_DIR ?? './data', 'catalog'));
  for (const line of describeSalvage(await salvageJournal(dir))) say(line);
}

const commands: Record<string, () => Promise<void>> = { salvage, reconcile };
const run = commands[command];
if (!run) {
  process.stderr.write('usage: npm run catalog -- salvage [catalog directory] | reconcile\n');
  process.exit(2);
}
try {
  await run();
} catch (err) {
  process.stderr.write(`catalog ${command} failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
