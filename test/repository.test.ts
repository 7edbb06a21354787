// The repository's own rules, checked on the source tree so a change that breaks one fails here:
// it stands alone (no path outside it), speaks of the product only (no work items, branches or
// numbered stops), imports run down the layers without circles (scripts/lib/import-graph.ts), and
// no code file outgrows 450 lines (docs/maintainers.md).
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { arrowsUp, importCircles, longFiles, readImportGraph } from '../scripts/lib/import-graph.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Every folder above the repository (its parent, grandparent, … but not the file system root). */
function foldersAbove(root: string): string[] {
  const above: string[] = [];
  for (let dir = path.dirname(root); dir !== path.dirname(dir); dir = path.dirname(dir)) above.push(dir);
  return above;
}

const WORK_ITEMS: [string, RegExp][] = [
  ['an issue number', /\b[Ii]ssues? #?\d+/],
  ['a numbered stop', /\b[Ss]tops? \d+/],
  ['a branch', /\bbranch(?:es)?\s+[`'"]?h-[\w-]+/],
  ['a task description', /\bthe\s+brief\b/i],
];

/** What a text names that the repository must not: work items, and paths of folders above `root`. */
export function forbiddenMentions(text: string, root: string): string[] {
  const found = WORK_ITEMS.filter(([, pattern]) => pattern.test(text)).map(([what, pattern]) => `${what} ("${pattern.exec(text)![0]}")`);
  const outside = foldersAbove(root).find((dir) => text.includes(`${dir}${path.sep}`));
  if (outside) found.push(`a path outside the repository ("${outside}${path.sep}")`);
  return found;
}

const TEXT = /\.(ts|js|mjs|cjs|sh|json|md|html|css|ya?ml|txt)$/;

function textFiles(rel: string): string[] {
  const full = path.join(repoRoot, rel);
  if (!fs.statSync(full).isDirectory()) return [rel];
  return fs.readdirSync(full, { withFileTypes: true }).flatMap((entry) => {
    const child = `${rel}/${entry.name}`;
    if (entry.isDirectory()) return textFiles(child);
    return TEXT.test(entry.name) ? [child] : [];
  });
}

/** Longer than 450 lines by nature: schema tables and the countries' photo rules. */
const LONG_BY_NATURE = /\.schemas\.ts$|^src\/passport\/specs\.ts$/;
describe('the repository', () => {
  it('names no work item and no folder outside it in src/, workers/, scripts/, test/, docs/ or the README', () => {
    const files = ['src', 'workers', 'scripts', 'test', 'docs', 'README.md', 'package.json', '.ci/run'].flatMap(textFiles);
    const offenders = new Map<string, string[]>();
    for (const file of files) {
      const found = forbiddenMentions(fs.readFileSync(path.join(repoRoot, file), 'utf8'), repoRoot);
      if (found.length > 0) offenders.set(file, found);
    }
    expect([...offenders].map(([file, found]) => `${file}: ${found.join(', ')}`)).to.deep.equal([]);
  });

  it('finds each kind of forbidden mention (the check above can fail)', () => {
    const root = path.join(os.tmpdir(), 'clone', 'pictor');
    expect(forbiddenMentions('Faces and placeholders, once per version.', root)).to.deep.equal([]);
    expect(forbiddenMentions('the stop signal; 3 stops; an issue with the header', root)).to.deep.equal([]);
    // Written with placeholders so that this file itself names none of them.
    const n = 18;
    for (const text of [`(issue ${n})`, `Issue ${n}: the target`, `since stop ${n}`, `branch ${'h'}-journal`, `the ledger form from the ${'brief'}`]) {
      expect(forbiddenMentions(text, root), text).to.have.length(1);
    }
    expect(forbiddenMentions(`see ${path.join(os.tmpdir(), 'clone', 'shared')}/models`, root)).to.have.length(1);
    expect(forbiddenMentions(`see ${path.join(root, 'docs')}/api.md`, root), 'a path of this clone names the folders above it').to.have.length(1);
  });

  it('imports run down the layers, with no import circle (src/, workers/, scripts/)', () => {
    const graph = readImportGraph(repoRoot);
    const up = arrowsUp(graph);
    const circles = importCircles(graph).map((c) => c.join(' <-> '));
    expect(up, 'arrows running up').to.deep.equal([]);
    expect(circles, 'import circles').to.deep.equal([]);
  });

  it('finds an arrow running up and an import circle (the check above can fail)', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'import-graph-'));
    try {
      const write = (file: string, text: string) => {
        fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
        fs.writeFileSync(path.join(root, file), text);
      };
      write('src/config.ts', "import type { Job } from './jobs/job.js';\n");
      write('src/jobs/job.ts', "export type Job = string;\nexport { a } from './a.js';\n");
      write('src/jobs/a.ts', "import { b } from './b.js';\nexport const a = b;\n");
      write('src/jobs/b.ts', "export const b = 1;\nexport const later = () => import('./a.js');\n");
      write('workers/main.ts', "import '../src/jobs/job.js';\n");
      const graph = readImportGraph(root);
      expect(arrowsUp(graph)).to.deep.equal(['src/config.ts -> src/jobs/job.ts']);
      expect(importCircles(graph)).to.deep.equal([['src/jobs/a.ts', 'src/jobs/b.ts']]);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  it('no code file is over 450 lines, schema tables and country data excepted', () => {
    const graph = readImportGraph(repoRoot);
    const long = longFiles(repoRoot, graph.files, 450).map((f) => f.file);
    expect(long.filter((f) => !LONG_BY_NATURE.test(f)), 'files over 450 lines').to.deep.equal([]);
  });

  it('ships the interface specification and a licence-clean corpus with its sources', () => {
    expect(fs.readFileSync(path.join(repoRoot, 'docs/spec/interface.md'), 'utf8')).to.match(/\/upload/);
    const sources = fs.readFileSync(path.join(repoRoot, 'test/fixtures/corpus/SOURCES.md'), 'utf8');
    for (const dir of ['photos', 'faces']) {
      const files = fs.readdirSync(path.join(repoRoot, 'test/fixtures/corpus', dir));
      expect(files.length, dir).to.be.greaterThan(2);
      for (const file of files) expect(sources, `${dir}/${file} listed in SOURCES.md`).to.include(file);
    }
  });
});
