import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { fileSha256 } from './file-sha256.js';

const dir = mkdtempSync(path.join(tmpdir(), 'gm-sha-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const sha = (text: string) => createHash('sha256').update(text).digest('hex');

describe('fileSha256', () => {
  test('behavior: the file’s SHA-256, remembered by path, size and mtime; a changed file is hashed again', async () => {
    const file = path.join(dir, 'm.gguf');
    const cache = path.join(dir, 'state', 'hashes.json');
    writeFileSync(file, 'weights v1');
    utimesSync(file, 1_700_000_000, 1_700_000_000);
    expect(await fileSha256(file, cache)).toBe(sha('weights v1'));
    expect(Object.values(JSON.parse(readFileSync(cache, 'utf8')))).toHaveLength(1);
    // Same size and mtime: the cached hash (the cache is what a restart reads, not the file).
    writeFileSync(file, 'weights v2');
    utimesSync(file, 1_700_000_000, 1_700_000_000);
    expect(await fileSha256(file, cache)).toBe(sha('weights v1'));
    // Another size: hashed again.
    writeFileSync(file, 'weights v3 longer');
    expect(await fileSha256(file, cache)).toBe(sha('weights v3 longer'));
    expect(await fileSha256(file)).toBe(sha('weights v3 longer'));
  });
});
