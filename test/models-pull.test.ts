/**
 * `gpumesh-node models pull` (the real command, its own process) against a local HTTP server that
 * answers like Hugging Face's resolve URLs — a named stand-in for the hub, which cannot be reached
 * here (node-llama-cpp's downloader is pointed at it with HF_ENDPOINT). The catalog's file is
 * verified against the coordinator's catalog and, served by a real daemon, listed under its
 * canonical id; a tampered file under the catalog's name is refused and removed. A 13 MB file
 * (three of the downloader's 5 MiB chunks) whose second chunk the server drops half way is resumed:
 * that chunk is asked for again, the first is not downloaded twice.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { writeTinyModel } from '@gpumesh/node';
import { type SpawnedNodeDaemon, spawnNodeDaemon } from '@gpumesh/node/testing';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { HUB_PATH } from '../coordinator/src/hub/hub-plugin.js';
import { createTestApp, type TestApp, testBackends } from '../coordinator/src/testing/index.js';

const run = promisify(execFile);
const BIN = path.resolve(import.meta.dirname, '../node/bin/gpumesh-node.js');
const sqlite = testBackends().find((b) => b.name === 'sqlite')!;
/** node-llama-cpp's downloader (ipull) fetches a file in chunks of this size. */
const CHUNK_BYTES = 5 * 1024 * 1024;

describe('gpumesh-node models pull (Hugging Face stand-in)', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'gm-pull-'));
  let t: TestApp;
  let base: string;
  let hub: http.Server;
  let hubUrl: string;
  let weights: Buffer;
  let big: Buffer;
  const requests: { url: string; range: string | undefined }[] = [];
  let node: SpawnedNodeDaemon | undefined;

  beforeAll(async () => {
    const file = path.join(dir, 'source.gguf');
    await writeTinyModel({ path: file });
    weights = readFileSync(file);
    const bigFile = path.join(dir, 'big-source.gguf');
    await writeTinyModel({ path: bigFile, width: 256, layers: 3, feedForward: 1024 });
    big = readFileSync(bigFile);
    const tampered = Buffer.from(weights);
    tampered[tampered.length - 1]! ^= 0xff;
    let dropped = false;
    // Resolve URLs as Hugging Face serves them: /<user>/<repo>/resolve/<branch>/<file>.
    hub = http.createServer((req, res) => {
      requests.push({ url: req.url ?? '', range: req.headers.range });
      // hf:<user>/<repo>:<quant> first asks the hub's manifest API which file holds that quantisation.
      if (req.url === '/v2/gpumesh/tiny/manifests/F32') {
        return void res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ ggufFile: { rfilename: 'gpumesh-tiny.gguf' } }));
      }
      const match = /^\/gpumesh\/(tiny|evil|big)\/resolve\/main\/(gpumesh-tiny|big)\.gguf/.exec(
        req.url ?? '',
      );
      if (!match) return void res.writeHead(404).end('not found');
      const body = match[1] === 'evil' ? tampered : match[1] === 'big' ? big : weights;
      const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
      const start = range ? Number(range[1]) : 0;
      const end = range?.[2] ? Number(range[2]) : body.length - 1;
      const headers = {
        'content-type': 'application/octet-stream',
        'accept-ranges': 'bytes',
        'content-length': String(end - start + 1),
        etag: `"${createHash('sha256').update(body).digest('hex')}"`,
        ...(range ? { 'content-range': `bytes ${start}-${end}/${body.length}` } : {}),
      };
      res.writeHead(range ? 206 : 200, headers);
      if (req.method === 'HEAD') return void res.end();
      const slice = body.subarray(start, end + 1);
      // The big file's second chunk (from 5 MiB) is cut half way the first time: a dropped connection.
      if (match[1] === 'big' && !dropped && range && start >= CHUNK_BYTES && slice.length > 1024) {
        dropped = true;
        res.write(slice.subarray(0, slice.length >> 1), () => res.socket?.destroy());
        return;
      }
      res.end(slice);
    });
    await new Promise<void>((resolve) => hub.listen(0, '127.0.0.1', resolve));
    hubUrl = `http://127.0.0.1:${(hub.address() as AddressInfo).port}/`;
    t = await createTestApp(sqlite, { label: 'pull' });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  }, 60_000);

  afterAll(async () => {
    await node?.stop();
    await t?.close();
    await new Promise((resolve) => hub?.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  const pull = (ref: string, modelsDir: string, extra: string[] = []) =>
    run(
      process.execPath,
      [
        BIN,
        'models',
        'pull',
        ref,
        '--coordinator',
        base,
        '--models-dir',
        modelsDir,
        '--state-dir',
        path.join(dir, 'state'),
        ...extra,
      ],
      { env: { ...process.env, HF_ENDPOINT: hubUrl, GPUMESH_COORDINATOR: '' }, timeout: 120_000 },
    );

  test('behavior: pulls with progress, verifies against the catalog; served, it is listed under the canonical id', async () => {
    const modelsDir = path.join(dir, 'good', 'models');
    const { stdout, stderr } = await pull('hf:gpumesh/tiny/gpumesh-tiny.gguf', modelsDir);
    expect(stderr).toMatch(/pulling hf:gpumesh\/tiny\/gpumesh-tiny\.gguf: 100%/);
    expect(stdout).toContain('verified against the catalog: served as gpumesh/tiny-chat');
    const files = readdirSync(modelsDir).filter((f) => f.endsWith('.gguf'));
    expect(files).toHaveLength(1);
    expect(readFileSync(path.join(modelsDir, files[0]!)).equals(weights)).toBe(true);
    node = spawnNodeDaemon({
      coordinator: `${base.replace('http', 'ws')}${HUB_PATH}`,
      dir: path.join(dir, 'good'),
    });
    await vi.waitFor(
      () => {
        if (!t.app.hub.index.offers('gpumesh/tiny-chat')?.size) throw new Error('not listed yet');
      },
      { timeout: 60_000, interval: 50 },
    );
  }, 180_000);

  test('behavior: hf:<user>/<repo>:<quant> resolves through the hub’s manifest and is verified by its hash', async () => {
    const modelsDir = path.join(dir, 'quant', 'models');
    const { stdout } = await pull('hf:gpumesh/tiny:F32', modelsDir);
    expect(stdout).toContain('verified against the catalog: served as gpumesh/tiny-chat');
    const [file] = readdirSync(modelsDir).filter((f) => f.endsWith('.gguf'));
    expect(readFileSync(path.join(modelsDir, file!)).equals(weights)).toBe(true);
  }, 120_000);

  test('behavior: a download the server drops half way is resumed, not restarted', async () => {
    const modelsDir = path.join(dir, 'big', 'models');
    const sha256 = createHash('sha256').update(big).digest('hex');
    const { stdout } = await pull('hf:gpumesh/big/big.gguf', modelsDir, ['--sha256', sha256]);
    expect(stdout).toContain('verified against --sha256');
    const files = readdirSync(modelsDir).filter((f) => f.endsWith('.gguf'));
    expect(readFileSync(path.join(modelsDir, files[0]!)).equals(big)).toBe(true);
    const ranges = requests.filter((r) => r.url.includes('/big/') && r.range).map((r) => r.range!);
    const starts = ranges.map((r) => Number(/^bytes=(\d+)-/.exec(r)![1]));
    // The dropped chunk was asked for again; the first chunk only once.
    expect(
      starts.filter((start) => start >= CHUNK_BYTES && start < 2 * CHUNK_BYTES).length,
      ranges.join(' '),
    ).toBeGreaterThan(1);
    expect(
      starts.filter((start) => start === 0),
      ranges.join(' '),
    ).toHaveLength(1);
  }, 180_000);

  test('behavior: models info reads the pulled file, recommend lists the catalog models that fit, rm removes it', async () => {
    const modelsDir = path.join(dir, 'good', 'models');
    const [file] = readdirSync(modelsDir).filter((f) => f.endsWith('.gguf'));
    const common = ['--coordinator', base, '--models-dir', modelsDir, '--state-dir', path.join(dir, 'state')];
    const cli = (...args: string[]) =>
      run(process.execPath, [BIN, 'models', ...args, ...common], {
        env: { ...process.env, GPUMESH_COORDINATOR: '' },
      });
    const info = JSON.parse((await cli('info', file!, '--json')).stdout);
    expect(info).toMatchObject({
      file,
      sizeBytes: weights.length,
      architecture: 'llama',
      trainedContext: 2048,
    });
    expect(info.parameters).toBeGreaterThan(0);
    expect(['gpu', 'cpu']).toContain(info.fits);
    const recommended = JSON.parse((await cli('recommend', '--json')).stdout) as {
      ramBytes: number;
      freeVramBytes: number;
      models: { modelId: string; memoryBytes: number; verified: boolean; licence: string | null }[];
    };
    const ids = recommended.models.map((m) => m.modelId);
    expect(ids).toContain('gpumesh/tiny-chat');
    expect(recommended.models.find((m) => m.modelId === 'gpumesh/tiny-chat')?.verified).toBe(true);
    // The real catalog's smallest chat model fits any machine that runs this; the 70B one only a big one.
    expect(recommended.models.find((m) => m.modelId === 'qwen/qwen2.5-0.5b-instruct')).toMatchObject({
      verified: false,
      licence: 'Apache-2.0',
    });
    const room = Math.max(recommended.ramBytes * 0.8, recommended.freeVramBytes);
    for (const m of recommended.models) expect(m.memoryBytes).toBeLessThanOrEqual(room);
    if (room < 48e9) expect(ids).not.toContain('meta-llama/llama-3.3-70b-instruct');
    const outside = await cli('rm', '../config.json').then(
      () => undefined,
      (error: { code: number }) => error,
    );
    expect(outside?.code).toBe(1);
    await node?.stop();
    node = undefined;
    await cli('rm', file!);
    expect(readdirSync(modelsDir).filter((f) => f.endsWith('.gguf'))).toEqual([]);
  }, 120_000);

  test('error: a tampered file under the catalog’s name is refused and leaves nothing', async () => {
    const modelsDir = path.join(dir, 'evil', 'models');
    const failed = await pull('hf:gpumesh/evil/gpumesh-tiny.gguf', modelsDir).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stderr).toContain('model_checksum_mismatch');
    const left = existsSync(modelsDir) ? readdirSync(modelsDir).filter((f) => f.endsWith('.gguf')) : [];
    expect(left).toEqual([]);
  }, 120_000);

  test('error: --sha256 pins the hash whatever the catalog says', async () => {
    const modelsDir = path.join(dir, 'pinned', 'models');
    const failed = await pull('hf:gpumesh/tiny/gpumesh-tiny.gguf', modelsDir, [
      '--sha256',
      '0'.repeat(64),
    ]).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failed?.stderr).toContain('model_checksum_mismatch');
  }, 120_000);
});

describe('gpumesh-node models pull <catalog id> (the coordinator serves the file)', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'gm-pull-id-'));
  const unpinnedBytes = Buffer.from('GGUF not pinned by the catalog');
  let publisher: http.Server;
  let t: TestApp;
  let base: string;
  let weights: Buffer;

  beforeAll(async () => {
    const verifierDir = path.join(dir, 'verifier');
    // Under the name npm start gives it, not the catalog's: the coordinator finds its files by content.
    const held = path.join(verifierDir, 'tiny-44136fa355b3678a.gguf');
    await writeTinyModel({ path: held });
    weights = readFileSync(held);
    // Another file of the same size with other bytes is not served under the catalog's name.
    writeFileSync(path.join(verifierDir, 'gpumesh-tiny.gguf'), Buffer.alloc(weights.length, 7));
    // The catalog's URLs name the coordinator's public URL: its real address here.
    const port = await new Promise<number>((resolve) => {
      const probe = http.createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    base = `http://127.0.0.1:${port}`;
    // The shipped catalog plus an entry whose hash is not pinned, downloaded from a publisher's
    // server (a stand-in here: Hugging Face can't be reached).
    publisher = http.createServer((_req, res) => res.end(unpinnedBytes));
    await new Promise<void>((resolve) => publisher.listen(0, '127.0.0.1', resolve));
    const catalogFile = path.join(dir, 'catalog.json');
    const shipped = JSON.parse(
      readFileSync(new URL('../coordinator/src/catalog/models.json', import.meta.url), 'utf8'),
    );
    const url = `http://127.0.0.1:${(publisher.address() as AddressInfo).port}/unpinned.gguf`;
    shipped.models.push({
      ...shipped.models[0],
      id: 'test/unpinned',
      embeddingId: undefined,
      files: [{ quant: 'F32', file: 'unpinned.gguf', sizeBytes: unpinnedBytes.length, url }],
    });
    writeFileSync(catalogFile, JSON.stringify(shipped));
    t = await createTestApp(sqlite, {
      label: 'pull-id',
      overrides: { publicUrl: base, catalogFile, trust: { verifierModelsDir: verifierDir } },
    });
    await t.app.listen({ port, host: '127.0.0.1' });
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    publisher?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const pull = (ref: string, modelsDir: string, env: Record<string, string> = {}) =>
    run(
      process.execPath,
      [
        BIN,
        'models',
        'pull',
        ref,
        '--coordinator',
        base,
        '--models-dir',
        modelsDir,
        '--state-dir',
        path.join(dir, 'state'),
      ],
      { env: { ...process.env, GPUMESH_COORDINATOR: '', ...env }, timeout: 120_000 },
    );

  test('behavior: models pull gpumesh/tiny-chat downloads the catalog file from the coordinator, verified', async () => {
    const modelsDir = path.join(dir, 'models');
    const { stdout } = await pull('gpumesh/tiny-chat', modelsDir);
    expect(stdout).toContain('verified against the catalog: served as gpumesh/tiny-chat');
    const files = readdirSync(modelsDir).filter((f) => f.endsWith('.gguf'));
    expect(readFileSync(path.join(modelsDir, files[0]!)).equals(weights)).toBe(true);
  }, 180_000);

  test('behavior: a catalog id whose hash is not pinned downloads from its source and says it is unverified', async () => {
    const modelsDir = path.join(dir, 'unpinned-models');
    const { stdout } = await pull('test/unpinned', modelsDir);
    expect(stdout).toContain("unverified: the catalog has not pinned test/unpinned's hash yet");
    expect(readFileSync(path.join(modelsDir, 'unpinned.gguf')).equals(unpinnedBytes)).toBe(true);
  }, 180_000);

  test('behavior: the coordinator answers Range requests for its files (a pull resumes)', async () => {
    const url = `${base}/api/models/files/gpumesh-tiny.gguf`;
    const part = await fetch(url, { headers: { range: 'bytes=100-199' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 100-199/${weights.length}`);
    expect(Buffer.from(await part.arrayBuffer()).equals(weights.subarray(100, 200))).toBe(true);
    expect((await fetch(url, { headers: { range: `bytes=${weights.length}-` } })).status).toBe(416);
    expect((await fetch(`${base}/api/models/files/other.gguf`)).status).toBe(404);
    expect((await fetch(`${base}/api/models/files/..%2Fsecret`)).status).toBe(404);
  });

  test('error: an unreachable source fails within 10 s, saying so', async () => {
    const started = performance.now();
    const failed = await pull('hf:gpumesh/tiny/gpumesh-tiny.gguf', path.join(dir, 'offline'), {
      // Nothing listens there: what an offline machine gets from the hub at once.
      HF_ENDPOINT: 'http://127.0.0.1:9/',
    }).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stderr).toMatch(/could not be reached .*offline/);
    console.log(`offline pull failed after ${Math.round(performance.now() - started)} ms`);
  }, 60_000);
});
