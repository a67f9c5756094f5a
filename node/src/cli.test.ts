import { readFile } from 'node:fs/promises';
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
});
