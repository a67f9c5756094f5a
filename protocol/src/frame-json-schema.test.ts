import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { frameJsonSchema } from './frame-json-schema.js';

const file = new URL('../schema/frames.schema.json', import.meta.url);

describe('frameJsonSchema', () => {
  test('behavior: schema/frames.schema.json is the current schema (GPUMESH_WRITE_SCHEMA=1 rewrites it)', () => {
    const current = `${JSON.stringify(frameJsonSchema(), null, 2)}\n`;
    if (process.env.GPUMESH_WRITE_SCHEMA === '1') writeFileSync(file, current);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(JSON.parse(current));
  });
});
