import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { loadMasterKey } from './load-master-key.js';

describe('loadMasterKey', () => {
  test('default: creates a 0600 key file once, then keeps it', () => {
    const dataDir = path.join(mkdtempSync(path.join(tmpdir(), 'gm-mk-')), 'data');
    const first = loadMasterKey({ dataDir });
    expect(first).toHaveLength(32);
    expect(statSync(path.join(dataDir, 'master.key')).mode & 0o777).toBe(0o600);
    expect(loadMasterKey({ dataDir }).equals(first)).toBe(true);
  });

  test('behavior: configured key wins', () => {
    const key = loadMasterKey({ dataDir: '/nonexistent', masterKey: 'ab'.repeat(32) });
    expect(key.toString('hex')).toBe('ab'.repeat(32));
  });
});
