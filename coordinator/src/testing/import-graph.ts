/**
 * The import graph of a source tree, for the architecture tests (import-cycles.test.ts,
 * layers.test.ts): every non-test .ts file with the files it imports, type-only imports,
 * re-exports and dynamic imports included. Relative imports only; packages are leaves.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** An import or re-export (group 1) or a dynamic import (group 2) of a relative path. */
export const IMPORT = /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*'(\.[^']+)'|import\(\s*'(\.[^']+)'\s*\)/g;

/** The relative paths `source` imports, as written. */
export function importsOf(source: string): string[] {
  return [...source.matchAll(IMPORT)].map((m) => (m[1] ?? m[2])!);
}

/** Every non-test .ts file under `dir` (absolute paths), with the files it imports. */
export function importGraph(dir: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts') || entry.name.endsWith('.test.ts')) continue;
    const file = path.join(entry.parentPath, entry.name);
    const deps = importsOf(readFileSync(file, 'utf8')).map((spec) =>
      path.resolve(path.dirname(file), spec.replace(/\.js$/, '.ts')),
    );
    graph.set(file, deps);
  }
  return graph;
}
