import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { DEFAULT_HEALTH_PORT, hubUrl, hubUrls, loadConfig } from './config.js';

const dir = await mkdtemp(join(tmpdir(), 'gpumesh-config-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

const cachedAboveInput = join(dir, 'cached-above-input.json');
await writeFile(
  cachedAboveInput,
  JSON.stringify({
    price: { currency: 'USD', inputPerMTok: '100', outputPerMTok: '1', cachedInputPerMTok: '101' },
  }),
);

describe('loadConfig', () => {
  test('default: named defaults, resolved paths, frozen', () => {
    const config = loadConfig({ flags: { 'state-dir': dir }, env: {} });
    expect(config).toMatchObject({
      coordinator: 'http://127.0.0.1:8080',
      role: 'cpu',
      runtime: 'llama',
      stateDir: dir,
      modelsDir: join(dir, 'models'),
      healthPort: DEFAULT_HEALTH_PORT,
      healthHost: '127.0.0.1',
    });
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.price)).toBe(true);
  });

  test('behavior: flags > environment > config file > defaults', async () => {
    const file = join(dir, 'node.json');
    await writeFile(
      file,
      JSON.stringify({
        role: 'gpu',
        healthPort: 1111,
        maxConcurrency: 3,
        threads: 2,
        models: [{ file: 'a.gguf', id: 'a' }],
      }),
    );
    const config = loadConfig({
      flags: { config: file, 'health-port': '3333' },
      env: {
        GPUMESH_NODE_HEALTH_PORT: '2222',
        GPUMESH_NODE_MAX_CONCURRENCY: '4',
        GPUMESH_NODE_STATE_DIR: dir,
      },
    });
    expect(config.healthPort).toBe(3333);
    expect(config.maxConcurrency).toBe(4);
    expect(config.threads).toBe(2);
    expect(config.role).toBe('gpu');
    expect(config.models).toEqual([{ file: 'a.gguf', id: 'a' }]);
  });

  test('behavior: <stateDir>/config.json is read when no file is named', async () => {
    await writeFile(join(dir, 'config.json'), JSON.stringify({ role: 'network' }));
    expect(loadConfig({ flags: { 'state-dir': dir }, env: {} }).role).toBe('network');
    await rm(join(dir, 'config.json'));
  });

  test('behavior: hub URL from an app URL or a ws URL', () => {
    expect(hubUrl('http://127.0.0.1:8080')).toBe('ws://127.0.0.1:8080/node');
    expect(hubUrl('https://mesh.example/')).toBe('wss://mesh.example/node');
    expect(hubUrl('ws://127.0.0.1:9/custom')).toBe('ws://127.0.0.1:9/custom');
  });

  test('behavior: several coordinator replicas, comma-separated, each a hub URL in order', () => {
    const config = loadConfig({
      flags: { coordinator: 'https://a.mesh.example, wss://b.mesh.example/node', 'state-dir': dir },
      env: {},
    });
    expect(hubUrls(config.coordinator)).toEqual(['wss://a.mesh.example/node', 'wss://b.mesh.example/node']);
    const env = { GPUMESH_NODE_STATE_DIR: dir };
    expect(() => loadConfig({ flags: { coordinator: 'http://a,ftp://b' }, env })).toThrow(/coordinator/);
    expect(() => loadConfig({ flags: { coordinator: 'http://a,' }, env })).toThrow(/coordinator/);
  });

  test('error: invalid settings name the setting', () => {
    const env = { GPUMESH_NODE_STATE_DIR: dir };
    expect(() => loadConfig({ flags: { role: 'miner' }, env })).toThrow(/role/);
    expect(() => loadConfig({ flags: { 'health-port': 'x' }, env })).toThrow(/health-port/);
    expect(() => loadConfig({ flags: { coordinator: 'ftp://x' }, env })).toThrow(/coordinator/);
    expect(() => loadConfig({ flags: { runtime: 'openai' }, env })).toThrow(/openaiUrl/);
    expect(() => loadConfig({ flags: { 'prefix-cache-bytes': '-1' }, env })).toThrow(/prefixCacheBytes/);
    expect(() =>
      loadConfig({
        configFile: cachedAboveInput,
        env,
      }),
    ).toThrow(/cachedInputPerMTok must be at most inputPerMTok/);
    expect(() => loadConfig({ flags: { config: join(dir, 'missing.json') }, env })).toThrow(
      expect.objectContaining({ code: 'config_invalid' }),
    );
  });
});
