// The import graph of the code (src/, workers/, scripts/), read from the sources with TypeScript's
// own import scanner (type-only imports, re-exports and dynamic import() included), and the two
// rules it must keep: every arrow runs down the layers below, and no file reaches itself again.
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/**
 * The layers, top first. A file may import files of its own layer's folder and of any layer below.
 * Entry points sit on top; the configuration and the error and log primitives at the bottom.
 * Prefixes are matched longest first, so `src/passport/` outranks `src/`.
 */
export const LAYERS: readonly (readonly string[])[] = [
  ['workers/', 'scripts/'],
  // The front door, and the dashboard it serves (browser code, on the SDK).
  ['src/web/', 'src/dashboard/'],
  // The SDK takes the parameter registry, signing and response types from the layers below.
  ['src/client/', 'src/jobs/'],
  // The HTTP API's response shapes (JSON Schemas and the types inferred from them), for the SDK and the front door.
  ['src/api/'],
  // The catalog records what imaging measured (previews, original metadata).
  ['src/catalog/'],
  ['src/imaging/'],
  ['src/passport/'],
  ['src/vision/'],
  ['src/storage/', 'src/net/'],
  ['src/config.ts', 'src/errors.ts', 'src/logger.ts', 'src/heap-growth.ts', 'src/shutdown.ts', 'src/durable-files.ts', 'src/types/'],
];

export const CODE_ROOTS = ['src', 'workers', 'scripts'];

export interface ImportGraph {
  files: string[];
  /** file → the repository files it imports (relative specifiers only). */
  imports: Map<string, string[]>;
}

export function codeFiles(repoRoot: string, roots: readonly string[] = CODE_ROOTS): string[] {
  const walk = (dir: string): string[] =>
    fs.readdirSync(path.join(repoRoot, dir), { withFileTypes: true }).flatMap((entry) => {
      const rel = `${dir}/${entry.name}`;
      if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : walk(rel);
      return /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [rel] : [];
    });
  return roots.filter((root) => fs.existsSync(path.join(repoRoot, root))).flatMap(walk).sort();
}

function resolve(repoRoot: string, from: string, specifier: string): string | null {
  if (!specifier.startsWith('.')) return null;
  const base = path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier));
  const candidates = [base.replace(/\.js$/, '.ts'), base.replace(/\.js$/, '.tsx'), base, `${base}.ts`, `${base}/index.ts`];
  return candidates.find((c) => fs.existsSync(path.join(repoRoot, c)) && fs.statSync(path.join(repoRoot, c)).isFile()) ?? null;
}

export function readImportGraph(repoRoot: string, roots: readonly string[] = CODE_ROOTS): ImportGraph {
  const files = codeFiles(repoRoot, roots);
  const imports = new Map<string, string[]>();
  for (const file of files) {
    const info = ts.preProcessFile(fs.readFileSync(path.join(repoRoot, file), 'utf8'), true, true);
    const targets = info.importedFiles.map((f) => resolve(repoRoot, file, f.fileName)).filter((t): t is string => t !== null && t !== file);
    imports.set(file, [...new Set(targets)].sort());
  }
  return { files, imports };
}

/** The layer of a file (0 = top), by its longest matching prefix; -1 when no layer names it. */
export function layerOf(file: string): number {
  let best = -1;
  let bestLength = 0;
  LAYERS.forEach((prefixes, layer) => {
    for (const prefix of prefixes) {
      if (file.startsWith(prefix) && prefix.length > bestLength) {
        best = layer;
        bestLength = prefix.length;
      }
    }
  });
  return best;
}

/** Arrows from a file to one in a higher layer (or to a file no layer names). */
export function arrowsUp(graph: ImportGraph): string[] {
  const up: string[] = [];
  for (const [from, targets] of graph.imports) {
    for (const to of targets) {
      const a = layerOf(from);
      const b = layerOf(to);
      if (a === -1 || b === -1 || b < a) up.push(`${from} -> ${to}`);
    }
  }
  return up;
}

/** Import circles: the strongly connected components of more than one file (Tarjan). */
export function importCircles(graph: ImportGraph): string[][] {
  let index = 0;
  const indices = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (v: string) => {
    indices.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.imports.get(v) ?? []) {
      if (!indices.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, indices.get(w)!));
      }
    }
    if (low.get(v) === indices.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) circles.push(component.sort());
    }
  };
  for (const file of graph.files) if (!indices.has(file)) visit(file);
  return circles;
}

/** Lines of each code file over `limit`, longest first. */
export function longFiles(repoRoot: string, files: readonly string[], limit: number): { file: string; lines: number }[] {
  return files
    .map((file) => ({ file, lines: fs.readFileSync(path.join(repoRoot, file), 'utf8').split('\n').length - 1 }))
    .filter((f) => f.lines > limit)
    .sort((a, b) => b.lines - a.lines);
}
