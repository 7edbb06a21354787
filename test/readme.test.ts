// The README's configuration table is the list of service settings: it names exactly the
// environment variables the service reads (src/config.ts, and any direct read in src/ or workers/).
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function tsFiles(dir: string): string[] {
  return fs.readdirSync(path.join(repoRoot, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = path.join(dir, entry.name);
    if (entry.isDirectory()) return tsFiles(rel);
    return entry.name.endsWith('.ts') ? [rel] : [];
  });
}

function variablesReadByTheService(): Set<string> {
  const names = new Set<string>();
  for (const file of [...tsFiles('src'), ...tsFiles('workers')]) {
    const source = fs.readFileSync(path.join(repoRoot, file), 'utf8');
    const patterns = file === path.join('src', 'config.ts')
      ? [/\b[a-z]\w*\(env, '([A-Z0-9_]+)'/g, /\benv\.([A-Z0-9_]+)/g]
      : [/process\.env\.([A-Z0-9_]+)/g];
    for (const pattern of patterns) for (const match of source.matchAll(pattern)) names.add(match[1]);
  }
  return names;
}

function variablesInTheReadmeTable(): Set<string> {
  const readme = fs.readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
  const section = readme.split(/^## Configuration$/m)[1]?.split(/^## /m)[0] ?? '';
  const names = new Set<string>();
  for (const row of section.split('\n').filter((line) => line.startsWith('| `'))) {
    for (const match of row.split('|')[1].matchAll(/`([A-Z0-9_]+)`/g)) names.add(match[1]);
  }
  return names;
}

describe('README', () => {
  it('the configuration table lists exactly the environment variables the service reads', () => {
    const read = [...variablesReadByTheService()].sort();
    const listed = [...variablesInTheReadmeTable()].sort();
    expect(read.length).to.be.greaterThan(30);
    expect(listed, 'README configuration table vs variables read in src/ and workers/').to.deep.equal(read);
  });
});
