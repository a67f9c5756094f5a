/**
 * The import graph of coordinator/src has no cycle, type-only imports included (what
 * `npx madge --circular` checks): a cycle is two capabilities that each need the other, the shape
 * the architecture keeps out. Relative imports only; packages are leaves here
 * (testing/import-graph.ts).
 */
import path from 'node:path';
import { expect, test } from 'vitest';
import { importGraph, importsOf } from './testing/import-graph.js';

const ROOT = import.meta.dirname;

/** Strongly connected components of more than one file (Tarjan). */
function cycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
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
        component.push(path.relative(ROOT, w));
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

test('default: no import cycle in coordinator/src', () => {
  const graph = importGraph(ROOT);
  expect(graph.size).toBeGreaterThan(100);
  expect(cycles(graph)).toEqual([]);
});

test('behavior: a cycle is found, type-only imports included', () => {
  const graph = new Map([
    ['/a.ts', ['/b.ts']],
    ['/b.ts', ['/c.ts']],
    ['/c.ts', ['/a.ts', '/d.ts']],
    ['/d.ts', []],
  ]);
  expect(cycles(graph)).toHaveLength(1);
  const source =
    "import type { X } from './x.js';\nexport { y } from './y.js';\nconst z = await import('./z.js');";
  expect(importsOf(source)).toEqual(['./x.js', './y.js', './z.js']);
});
