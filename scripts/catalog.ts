// npm run catalog -- <command> [catalog directory]: maintenance of the embedded catalog's journal.
//   salvage   keep every readable record of a damaged journal, set the damaged bytes aside and
//             say what was lost (docs/durability.md). Run it with the service stopped.
// The directory defaults to $DATA_DIR/catalog (./data/catalog), where `npm start` keeps it.
import path from 'node:path';
import { describeSalvage, salvageJournal } from '../src/catalog/journal/salvage.js';

const [command, dirArg] = process.argv.slice(2);
const dir = path.resolve(dirArg ?? path.join(process.env.DATA_DIR ?? './data', 'catalog'));

if (command !== 'salvage') {
  process.stderr.write('usage: npm run catalog -- salvage [catalog directory]\n');
  process.exit(2);
}
try {
  for (const line of describeSalvage(await salvageJournal(dir))) process.stdout.write(line + '\n');
} catch (err) {
  process.stderr.write(`salvage of ${dir} failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
