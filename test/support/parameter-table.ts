/**
 * coordinator/README.md's table of /v1 parameters ("## The /v1 parameters"), read for the tests
 * that hold the code to it: one row per member, its example value (JSON, or none) and what each
 * endpoint does with it.
 */
import { readFileSync } from 'node:fs';

export const ENDPOINTS = ['chat', 'completions', 'embeddings', 'responses'] as const;
export type Endpoint = (typeof ENDPOINTS)[number];
export type Treatment = 'accepted' | 'ignored' | '400' | '—';
export type ParameterRow = {
  name: string;
  /** The example value, when the table gives one. */
  example?: unknown;
  on: Record<Endpoint, Treatment>;
};

const TREATMENTS: readonly string[] = ['accepted', 'ignored', '400', '—'];

export function readParameterTable(
  file = new URL('../../coordinator/README.md', import.meta.url),
): ParameterRow[] {
  const text = readFileSync(file, 'utf8');
  const start = text.indexOf('## The /v1 parameters');
  if (start < 0) throw new Error('coordinator/README.md has no "## The /v1 parameters" section');
  const end = text.indexOf('\n## ', start + 1);
  const rows: ParameterRow[] = [];
  for (const line of text.slice(start, end < 0 ? undefined : end).split('\n')) {
    if (!line.startsWith('| `')) continue;
    const cells = line
      .split('|')
      .slice(1, -1)
      .map((c) => c.trim());
    if (cells.length !== 2 + ENDPOINTS.length) throw new Error(`a table row without six cells: ${line}`);
    const [name, example, ...treatments] = cells as [string, string, ...string[]];
    for (const t of treatments) if (!TREATMENTS.includes(t)) throw new Error(`"${t}" in: ${line}`);
    rows.push({
      name: name.replace(/`/g, ''),
      ...(example === '—' ? {} : { example: JSON.parse(example.replace(/`/g, '')) }),
      on: Object.fromEntries(ENDPOINTS.map((e, i) => [e, treatments[i]])) as Record<Endpoint, Treatment>,
    });
  }
  return rows;
}
