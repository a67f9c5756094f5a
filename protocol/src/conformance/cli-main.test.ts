import { describe, expect, test } from 'vitest';
import { main } from './cli.js';

describe('main', () => {
  test('error: usage mistakes exit 2 with the usage text', async () => {
    for (const argv of [
      [],
      ['node'],
      ['node', '--listen', '-1'],
      ['coordinator'],
      ['sideways'],
      ['coordinator', '--url', 'ws://x', '--api-url', 'http://x'],
    ]) {
      const lines: string[] = [];
      expect(await main(argv, (line) => lines.push(line))).toBe(2);
      expect(lines.join('\n')).toContain('Usage:');
    }
  });

  test('behavior: --help exits 0', async () => {
    const lines: string[] = [];
    expect(await main(['--help'], (line) => lines.push(line))).toBe(0);
    expect(lines[0]).toContain('gpumesh-conformance node --listen');
  });
});
