// The import graph of src/ (type-only imports included): circles, arrows running up the layers,
// and reaches into the passport room past its entry. Prints figures; exit status 1 on any finding.
//
//   node dist/scripts/import-graph.js
//
// Layers, lowest first; a module may import its own layer's modules or lower ones. Rooms on one
// layer (imaging and passport) do not import each other; both stand on vision.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(new URL('../..', import.meta.url).pathname);
const LAYERS: readonly (readonly string[])[] = [
  ['src/config.ts', 'src/errors.ts', 'src/logger.ts', 'src/heap-growth.ts', 'src/shutdown.ts', 'src/types', 'src/net'],
  ['src/vision'],
  ['src/storage'],
  ['src/imaging', 'src/passport'],
  ['src/catalog'],
  ['src/jobs'],
  ['src/client'],
  ['src/web', 'src/dashboard'],
];
/** The one module of the passport room others import. */
const PASSPORT_ENTRY = 'src/passport/index.ts';
/** Type-only importers that cannot load the entry: the SDK's types are checked without Node's. */
const DOM_ONLY = ['src/client/types.ts'];

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return name === 'assembly' || name === 'vendor' ? [] : files(full);
    return /\.tsx?$/.test(name) && !name.endsWith('.d.ts') ? [full] : [];
  });
}

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specs = [...text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s*['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g)].map((m) => m[1] ?? m[2]);
  return specs.map((s) => path.relative(root, path.resolve(path.dirname(file), s.replace(/\.js$/, '.ts'))));
}

function room(module: string): string | null {
  return LAYERS.flat().find((r) => module === r || module.startsWith(`${r}/`)) ?? null;
}
const layerOf = (r: string): number => LAYERS.findIndex((l) => l.includes(r));

const modules = ['src', 'workers', 'scripts'].flatMap((d) => files(path.join(root, d))).map((f) => path.relative(root, f));
const graph = new Map(modules.map((m) => [m, importsOf(path.join(root, m)).filter((t) => modules.includes(t))]));
const edges = [...graph.values()].reduce((n, ts) => n + ts.length, 0);

const upward: string[] = [];
const sideways: string[] = [];
const pastEntry: string[] = [];
for (const [from, targets] of graph) {
  const a = room(from);
  for (const to of targets) {
    const b = room(to);
    if (b === 'src/passport' && a !== 'src/passport' && to !== PASSPORT_ENTRY && !DOM_ONLY.includes(from)) pastEntry.push(`${from} -> ${to}`);
    if (!a || !b || a === b) continue;
    if (layerOf(b) > layerOf(a)) upward.push(`${from} -> ${to}`);
    else if (layerOf(b) === layerOf(a) && layerOf(a) > 0) sideways.push(`${from} -> ${to}`);
  }
}

// Circles: strongly connected components of more than one module (Tarjan).
const circles: string[][] = [];
const index = new Map<string, number>();
const low = new Map<string, number>();
const stack: string[] = [];
const onStack = new Set<string>();
let next = 0;
function visit(v: string): void {
  index.set(v, next);
  low.set(v, next++);
  stack.push(v);
  onStack.add(v);
  for (const w of graph.get(v) ?? []) {
    if (!index.has(w)) {
      visit(w);
      low.set(v, Math.min(low.get(v)!, low.get(w)!));
    } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
  }
  if (low.get(v) === index.get(v)) {
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1) circles.push(component.sort());
  }
}
for (const m of modules) if (!index.has(m)) visit(m);

console.log(`${modules.length} modules, ${edges} imports (src/, workers/, scripts/; type-only included)`);
console.log(`arrows running up: ${upward.length}`);
for (const e of upward) console.log(`  ${e}`);
console.log(`arrows between rooms of one layer: ${sideways.length}`);
for (const e of sideways) console.log(`  ${e}`);
console.log(`import circles: ${circles.length}`);
for (const c of circles) console.log(`  ${c.join(' <-> ')}`);
console.log(`imports into the passport room past ${PASSPORT_ENTRY}: ${pastEntry.length} (${DOM_ONLY.join(', ')} excepted)`);
for (const e of pastEntry) console.log(`  ${e}`);
process.exitCode = upward.length + sideways.length + circles.length + pastEntry.length > 0 ? 1 : 0;
