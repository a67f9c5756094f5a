import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { checkCatalogHash } from './mini-chat-model.js';

const dir = mkdtempSync(path.join(tmpdir(), 'gm-catalog-hash-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('default: a file with the pinned hash passes', async () => {
  const file = path.join(dir, 'ok.gguf');
  writeFileSync(file, 'GGUF weights');
  const pinned = createHash('sha256').update('GGUF weights').digest('hex');
  await expect(checkCatalogHash(file, pinned, 'gpumesh/mini-chat F16')).resolves.toBeUndefined();
});

test('error: a file whose hash is not the catalog pin is refused, both hashes named', async () => {
  const file = path.join(dir, 'tampered.gguf');
  writeFileSync(file, 'GGUF weightz');
  const actual = createHash('sha256').update('GGUF weightz').digest('hex');
  const pinned = createHash('sha256').update('GGUF weights').digest('hex');
  const refused = checkCatalogHash(file, pinned, 'gpumesh/mini-chat F16');
  await expect(refused).rejects.toThrow(actual);
  await expect(refused).rejects.toThrow(pinned);
  await expect(refused).rejects.toThrow(/refusing to serve it/);
});
