/**
 * protocol/README.md lists every export of every entry point ("Public exports"). These tests fail
 * when an entry point gains or loses a name and the list is not updated (or the other way round),
 * so what the package promises is decided in the README, not by whatever a module happens to export.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, test } from 'vitest';

/** Each entry point: its README heading's import path, and its source file. */
const ENTRY_POINTS = {
  '@gpumesh/protocol': './index.ts',
  '@gpumesh/protocol/conformance': './conformance/index.ts',
  '@gpumesh/protocol/internal': './internal.ts',
} as const;
type EntryPoint = keyof typeof ENTRY_POINTS;

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

/** The names the README lists under "### `<entry>`": values, and `type X` for type-only exports. */
function listed(entry: EntryPoint): { values: string[]; types: string[] } {
  const section = readme.slice(readme.indexOf('\n## Public exports'));
  const start = section.indexOf(`\n### \`${entry}\``);
  expect(start, `README has no "### \`${entry}\`" section`).toBeGreaterThan(0);
  const end = section.indexOf('\n#', start + 1);
  const names = [...section.slice(start, end === -1 ? undefined : end).matchAll(/^- .*$/gm)].flatMap(
    ([line]) => [...line.matchAll(/`((?:type )?[A-Za-z_$][\w$]*)`/g)].map(([, name]) => name!),
  );
  return {
    values: names.filter((name) => !name.startsWith('type ')).sort(),
    types: names.flatMap((name) => (name.startsWith('type ') ? [name.slice(5)] : [])).sort(),
  };
}

/** The type-only exports of `file`, as the compiler sees them (Object.keys cannot see types). */
function typeOnlyExports(file: string): string[] {
  const path = fileURLToPath(new URL(file, import.meta.url));
  const program = ts.createProgram([path], {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    skipLibCheck: true,
    noEmit: true,
    types: [],
  });
  const checker = program.getTypeChecker();
  const module = checker.getSymbolAtLocation(program.getSourceFile(path)!)!;
  return checker
    .getExportsOfModule(module)
    .filter((symbol) => {
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      return !(target.flags & ts.SymbolFlags.Value);
    })
    .map((symbol) => symbol.name)
    .sort();
}

describe('protocol/README.md "Public exports"', () => {
  for (const entry of Object.keys(ENTRY_POINTS) as EntryPoint[]) {
    test(`behavior: lists exactly the values ${entry} exports`, async () => {
      const exported = Object.keys(await import(entry)).sort();
      expect(listed(entry).values).toEqual(exported);
    });

    test(`behavior: lists exactly the types ${entry} exports`, { timeout: 60_000 }, () => {
      expect(listed(entry).types).toEqual(typeOnlyExports(ENTRY_POINTS[entry]));
    });
  }

  test('behavior: each name is listed once', () => {
    for (const entry of Object.keys(ENTRY_POINTS) as EntryPoint[]) {
      const { values, types } = listed(entry);
      const names = [...values, ...types];
      expect(names.filter((name, i) => names.indexOf(name) !== i)).toEqual([]);
    }
  });
});
