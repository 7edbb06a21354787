// The repository stands alone: a clone without sibling folders has every file the code, the tests
// and the docs use. Checked on the source tree, so a new reference outside it fails here first.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const OUTSIDE = /\.\.\/shared\/|\/work\/shared/;

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(path.join(repoRoot, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(rel);
    return /\.(ts|js|mjs|sh|json|md)$/.test(entry.name) ? [rel] : [];
  });
}

describe('the repository stands alone', () => {
  it('no source, test, script, worker or doc refers to a folder outside the repository', () => {
    const files = ['src', 'workers', 'test', 'scripts', 'docs'].flatMap(sourceFiles).concat(['README.md', 'package.json', '.ci/run']);
    const offenders = files.filter((file) => OUTSIDE.test(fs.readFileSync(path.join(repoRoot, file), 'utf8')));
    expect(offenders).to.deep.equal([]);
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
