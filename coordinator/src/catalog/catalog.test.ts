import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { writeTinyModel } from '@gpumesh/node';
import { describe, expect, test } from 'vitest';
import { Catalog, loadCatalog } from './catalog.js';

const NODE = '0xAbCdEf0000000000000000000000000000000001';
const KNOWN = 'a'.repeat(64);
const catalog = new Catalog([
  {
    id: 'vendor/model',
    name: 'a model',
    family: 'chat',
    contextLength: 4096,
    embeddingId: 'vendor/model-embed',
    files: [{ quant: 'Q4_K_M', file: 'model.Q4_K_M.gguf', sizeBytes: 1, sha256: KNOWN }],
    priceBand: { inputPerMTok: ['0', '1'], outputPerMTok: ['0', '1'] },
  },
]);

describe('Catalog.listedId', () => {
  test('behavior: a known hash is listed under the canonical id, whatever the node named it', () => {
    expect(catalog.listedId({ id: 'my-file', family: 'chat', sha256: KNOWN }, NODE)).toBe('vendor/model');
    expect(catalog.listedId({ id: 'my-file-embed', family: 'embedding', sha256: KNOWN }, NODE)).toBe(
      'vendor/model-embed',
    );
  });

  test('behavior: an unknown hash, or a catalog name without a hash, is node-scoped', () => {
    const scoped = `${NODE.toLowerCase()}/`;
    expect(catalog.listedId({ id: 'vendor/model', family: 'chat', sha256: 'b'.repeat(64) }, NODE)).toBe(
      `${scoped}vendor/model`,
    );
    expect(catalog.listedId({ id: 'vendor/model', family: 'chat' }, NODE)).toBe(`${scoped}vendor/model`);
    expect(catalog.listedId({ id: 'vendor/model-embed', family: 'embedding' }, NODE)).toBe(
      `${scoped}vendor/model-embed`,
    );
  });

  test('behavior: an unhashed offer the catalog does not name keeps its name (a relay runtime)', () => {
    expect(catalog.listedId({ id: 'upstream-model', family: 'chat' }, NODE)).toBe('upstream-model');
  });
});

describe('Catalog.quantOf', () => {
  test("default: a known file's GGUF type; nothing for an unknown hash", () => {
    expect(catalog.quantOf(KNOWN)).toBe('Q4_K_M');
    expect(catalog.quantOf('b'.repeat(64))).toBeUndefined();
  });
});

describe('Catalog.cheaperThan', () => {
  test("default: the shipped mini-chat's F16 has its Q8_0 and Q4_0 below it, the Q4_0 none", () => {
    const shipped = loadCatalog();
    const files = shipped.models.find((m) => m.id === 'gpumesh/mini-chat')!.files;
    const sha = (quant: string) => files.find((f) => f.quant === quant)!.sha256!;
    expect(shipped.cheaperThan(sha('F16'))).toEqual([
      { quant: 'Q8_0', sha256: sha('Q8_0') },
      { quant: 'Q4_0', sha256: sha('Q4_0') },
    ]);
    expect(shipped.cheaperThan(sha('Q8_0'))).toEqual([{ quant: 'Q4_0', sha256: sha('Q4_0') }]);
    expect(shipped.cheaperThan(sha('Q4_0'))).toEqual([]);
  });

  test('behavior: an unknown hash, or a model of one file, has none', () => {
    expect(catalog.cheaperThan(KNOWN)).toEqual([]);
    expect(catalog.cheaperThan('b'.repeat(64))).toEqual([]);
  });
});

describe('loadCatalog', () => {
  test('default: the shipped catalog holds the generated tiny model’s exact file', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'gm-catalog-'));
    try {
      const file = path.join(dir, 'tiny.gguf');
      await writeTinyModel({ path: file });
      const sha256 = createHash('sha256').update(readFileSync(file)).digest('hex');
      const model = loadCatalog().byHash(sha256);
      expect(model?.id).toBe('gpumesh/tiny-chat');
      expect(model?.files[0]?.sizeBytes).toBe(statSync(file).size);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('default: the shipped catalog lists real models an owner would pick, each with its facts and source', () => {
    const { models } = loadCatalog();
    // Beside our own two (the random tiny model and mini-chat, trained here, shipped in the repo).
    const real = models.filter((m) => !m.id.startsWith('gpumesh/'));
    // Chat from 0.5B to 70B, embedding, vision and voice.
    expect(new Set(real.map((m) => m.family))).toEqual(new Set(['chat', 'embedding', 'vision', 'voice']));
    const params = real.map(
      (m) => Number.parseFloat(m.parameters ?? 'NaN') * (m.parameters?.endsWith('M') ? 1e-3 : 1),
    );
    expect(Math.min(...params.filter((_, i) => real[i]!.family === 'chat'))).toBe(0.5);
    expect(Math.max(...params)).toBe(70);
    for (const model of real) {
      expect(model.licence?.url, model.id).toMatch(/^https:\/\//);
      expect(model.source, model.id).toMatch(/^https:\/\/huggingface\.co\//);
      for (const file of model.files) {
        // Downloaded from the publisher's repository, under its own file name.
        expect(file.url, model.id).toMatch(
          new RegExp(`^https://huggingface\\.co/[^/]+/[^/]+/resolve/main/${file.file}$`),
        );
        expect(file.memoryBytes, model.id).toBeGreaterThan(file.sizeBytes);
      }
    }
  });

  test('behavior: a file whose hash is not pinned names no weights: a node serving it stays in its own scope', () => {
    const unpinned = loadCatalog().models.find((m) => m.files.every((f) => !f.sha256))!;
    const catalog = new Catalog([unpinned]);
    expect(catalog.listedId({ id: unpinned.id, family: unpinned.family, sha256: 'c'.repeat(64) }, NODE)).toBe(
      `${NODE.toLowerCase()}/${unpinned.id}`,
    );
  });

  test('error: a catalog that does not match the schema is refused, naming the setting', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'gm-catalog-'));
    try {
      const file = path.join(dir, 'bad.json');
      writeFileSync(file, JSON.stringify({ models: [{ id: 'no-slash' }] }));
      expect(() => loadCatalog(file)).toThrow(/catalogFile/);
      expect(() => loadCatalog(path.join(dir, 'absent.json'))).toThrow(/catalogFile/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
