// `npm run test:power-cut:mutants`: shows that the power-cut tests can fail. Every fsync call under
// src/ (a `.sync(`, `.datasync(` or `.syncDirectory(` call) is replaced, one at a time, by a no-op
// in the built JavaScript, and the power-cut suite (with the durability unit tests first, so most
// mutants are killed in seconds) runs against it. Prints each mutant's fate and "killed N of N";
// exits 1 if any mutant survived. The built file is restored after each run, also on Ctrl-C.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const DIST = path.resolve(here, '../..');
const ROOT = path.resolve(DIST, '..');
const CALL = /([\w$.]+?)!?\.(sync|datasync|syncDirectory)\(/g;
// The quick ones first: most mutants are killed within seconds.
const SUITE = [
  'dist/test/durable-files.test.js',
  'dist/test/power-cut/catalog-export.power-cut.js',
  'dist/test/power-cut/catalog.power-cut.js',
  'dist/test/power-cut/service.power-cut.js',
];

interface Site {
  source: string;
  line: number;
  code: string;
  built: string;
  /** Which call of the built file, in file order. */
  index: number;
}

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sourceFiles(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []));
}

/** Calls outside comments, in file order. */
function calls(text: string): { line: number; code: string }[] {
  const found: { line: number; code: string }[] = [];
  text.split('\n').forEach((line, i) => {
    const code = line.replace(/\/\/.*$/, '');
    if (/^\s*\*/.test(code)) return;
    for (const m of code.matchAll(CALL)) found.push({ line: i + 1, code: m[0] });
  });
  return found;
}

function sites(): Site[] {
  const all: Site[] = [];
  for (const source of sourceFiles(path.join(ROOT, 'src')).sort()) {
    const inSource = calls(fs.readFileSync(source, 'utf8'));
    if (inSource.length === 0) continue;
    const built = path.join(DIST, path.relative(ROOT, source)).replace(/\.ts$/, '.js');
    const inBuilt = calls(fs.readFileSync(built, 'utf8'));
    if (inBuilt.length !== inSource.length) throw new Error(`${built}: ${inBuilt.length} fsync calls, ${source}: ${inSource.length}; build first (npm run build)`);
    inSource.forEach((c, index) => all.push({ source: path.relative(ROOT, source), line: c.line, code: c.code, built, index }));
  }
  return all;
}

/** The built file with its `index`-th call made a no-op. */
function mutate(text: string, index: number): string {
  let seen = -1;
  const lines = text.split('\n').map((line) => {
    const commentAt = line.indexOf('//');
    const code = commentAt >= 0 ? line.slice(0, commentAt) : line;
    if (/^\s*\*/.test(code)) return line;
    return code.replace(CALL, (match) => (++seen === index ? '(async () => undefined)(' : match)) + (commentAt >= 0 ? line.slice(commentAt) : '');
  });
  return lines.join('\n');
}

let restore: (() => void) | null = null;
process.on('SIGINT', () => {
  restore?.();
  process.exit(130);
});

// --only=<file>:<line> runs the mutants of that call alone.
const only = process.argv.find((a) => a.startsWith('--only='))?.slice('--only='.length);
const list = sites().filter((site) => !only || `${site.source}:${site.line}` === only);
console.log(`${list.length} fsync calls under src/`);
if (process.argv.includes('--list')) {
  for (const site of list) console.log(`  ${site.source}:${site.line} ${site.code}…`);
  process.exit(0);
}
let killed = 0;
const started = Date.now();
for (const [i, site] of list.entries()) {
  const original = fs.readFileSync(site.built, 'utf8');
  restore = () => fs.writeFileSync(site.built, original);
  fs.writeFileSync(site.built, mutate(original, site.index));
  const t0 = Date.now();
  const run = spawnSync('npx', ['mocha', '--no-config', '--bail', '--timeout', '180000', '--exit', ...SUITE], { cwd: ROOT, encoding: 'utf8', shell: false, timeout: 15 * 60_000 });
  restore();
  restore = null;
  const failed = run.status !== 0;
  if (failed) killed++;
  const failure = /\n\s+1\) (.*)\n\s+(.*)\n/.exec(run.stdout ?? '');
  const by = failure ? `${failure[1].trim()} › ${failure[2].trim().replace(/:$/, '')}` : 'no test failed';
  console.log(`mutant ${i + 1}/${list.length} ${site.source}:${site.line} ${site.code}…  ${failed ? 'killed' : 'SURVIVED'} in ${Math.round((Date.now() - t0) / 1000)} s (${by})`);
}
console.log(`killed ${killed} of ${list.length} in ${Math.round((Date.now() - started) / 60_000)} min`);
process.exit(killed === list.length ? 0 : 1);
