import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { main } from './cli.js';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('main', () => {
  test('behavior: --version prints the package version and exits 0', async () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    const { version } = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8'));
    expect(await main(['--version'])).toBe(0);
    expect(log.mock.calls).toEqual([[version]]);
  });

  test('behavior: --help exits 0 with the usage text, no command exits 2', async () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    expect(await main(['--help'])).toBe(0);
    expect(await main([])).toBe(2);
    expect(log.mock.calls.map(([text]) => text)).toEqual([
      expect.stringContaining('Usage: gpumesh-node <command>'),
      expect.stringContaining('Usage: gpumesh-node <command>'),
    ]);
  });

  test("behavior: <command> --help prints that command's usage (models: every models command's)", async () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    expect(await main(['models', 'pull', '--help'])).toBe(0);
    expect(await main(['models', '--help'])).toBe(0);
    const [pull, models] = log.mock.calls.map(([text]) => String(text));
    expect(pull).toMatch(/^Usage: gpumesh-node models pull \[flags\]\n\n {2}models pull <ref>/);
    expect(pull).not.toContain('models rm');
    expect(pull).toContain('Settings (flags > GPUMESH_* environment');
    expect(models).toMatch(/^Usage: gpumesh-node models \[flags\]/);
    for (const sub of ['models info', 'models rm', 'models recommend', 'models pull'])
      expect(models).toContain(sub);
  });

  test('error: an unknown command or models command exits 2 with the usage', async () => {
    const error = vi.spyOn(console, 'error').mockImplementation(() => {});
    vi.spyOn(console, 'log').mockImplementation(() => {});
    expect(await main(['serve'])).toBe(2);
    // `models list` is `models`.
    expect(await main(['models', 'list', '--json', '--models-dir', '/nonexistent/gm-cli'])).toBe(0);
    expect(await main(['models', 'push'])).toBe(2);
    const [serve, push] = error.mock.calls.map(([text]) => String(text));
    expect(serve).toMatch(/^Unknown command serve\.\n\nUsage: gpumesh-node <command>/);
    expect(push).toMatch(/^Unknown models command push\.\n\nUsage: gpumesh-node <command>/);
  });

  test('error: start with no model to serve says where to get one and exits 3', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gm-cli-'));
    try {
      const error = vi.spyOn(console, 'error').mockImplementation(() => {});
      const models = join(dir, 'models');
      expect(
        await main([
          'start',
          '--state-dir',
          dir,
          '--models-dir',
          models,
          '--coordinator',
          'http://127.0.0.1:9',
        ]),
      ).toBe(3);
      expect(String(error.mock.calls[0]?.[0])).toContain(`no model to serve: no .gguf file in ${models}`);
      expect(String(error.mock.calls[0]?.[0])).toContain('gpumesh-node models pull');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('error: status with no node running says so, as JSON too, and exits 1', async () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    vi.spyOn(console, 'error').mockImplementation(() => {});
    // A port nothing listens on (the discard port).
    expect(await main(['status', '--json', '--health-port', '9'])).toBe(1);
    expect(JSON.parse(String(log.mock.calls[0]?.[0]))).toMatchObject({ running: false, online: false });
  });

  test('behavior: id, models and doctor print one JSON document with --json', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gm-cli-'));
    try {
      const log = vi.spyOn(console, 'log').mockImplementation(() => {});
      vi.spyOn(console, 'error').mockImplementation(() => {});
      const common = [
        '--state-dir',
        dir,
        '--models-dir',
        join(dir, 'models'),
        '--coordinator',
        'http://127.0.0.1:9',
      ];
      expect(await main(['id', '--json', ...common])).toBe(0);
      const id = JSON.parse(String(log.mock.calls.at(-1)?.[0]));
      expect(id.nodeId).toMatch(/^0x[0-9a-fA-F]{40}$/);
      expect(id.ownerProofText.toLowerCase()).toContain(id.nodeId.toLowerCase());
      expect(await main(['models', '--json', ...common])).toBe(0);
      expect(JSON.parse(String(log.mock.calls.at(-1)?.[0]))).toEqual({
        modelsDir: join(dir, 'models'),
        models: [],
      });
      // Nothing listens on port 9 and there is no model: the checks fail, as JSON.
      expect(await main(['doctor', '--json', ...common])).toBe(1);
      const doctor = JSON.parse(String(log.mock.calls.at(-1)?.[0]));
      expect(doctor.ok).toBe(false);
      expect(doctor.checks.map((c: { name: string }) => c.name)).toContain('coordinator reachable');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
