// Prints the import graph's figures for src/, workers/ and scripts/: files, arrows, arrows running
// up the layers (scripts/lib/import-graph.ts names them), import circles, and files over 450 lines.
// `npm run graph` (or `node dist/scripts/import-graph.js [repository root]`). The same rules are
// checked by test/repository.test.ts.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { arrowsUp, importCircles, longFiles, readImportGraph } from './lib/import-graph.js';

const repoRoot = path.resolve(process.argv[2] ?? path.join(path.dirname(fileURLToPath(import.meta.url)), '../..'));
const graph = readImportGraph(repoRoot);
const arrows = [...graph.imports.values()].reduce((n, targets) => n + targets.length, 0);
const up = arrowsUp(graph);
const circles = importCircles(graph);
const long = longFiles(repoRoot, graph.files, 450);

console.log(`files ${graph.files.length}   arrows ${arrows}   arrows up ${up.length}   circles ${circles.length}   files over 450 lines ${long.length}`);
for (const arrow of up) console.log(`  up      ${arrow}`);
for (const circle of circles) console.log(`  circle  ${circle.join(' <-> ')}`);
for (const { file, lines } of long) console.log(`  long    ${file} (${lines} lines)`);
