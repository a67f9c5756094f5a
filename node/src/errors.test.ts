import { readFileSync } from 'node:fs';
import { PROTOCOL_ERRORS } from '@gpumesh/protocol';
import { describe, expect, test } from 'vitest';
import { NODE_ERRORS } from './errors.js';

describe('NODE_ERRORS', () => {
  test('default: node/README.md lists exactly the registered codes', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const section = readme.slice(readme.indexOf('## Error codes'));
    const documented = [...section.matchAll(/^\| `([a-z_]+)` +\|/gm)].map((match) => match[1]);
    expect(documented.sort()).toEqual(Object.keys(NODE_ERRORS).sort());
  });

  test('behavior: every wire code is a protocol error code', () => {
    for (const entry of Object.values(NODE_ERRORS)) {
      if (entry.wire !== null) expect(Object.keys(PROTOCOL_ERRORS)).toContain(entry.wire);
    }
  });
});
