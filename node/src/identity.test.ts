import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { verifyMessage } from 'viem';
import { afterAll, describe, expect, test } from 'vitest';
import { loadNodeIdentity } from './identity.js';

const dir = await mkdtemp(join(tmpdir(), 'gpumesh-identity-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('loadNodeIdentity', () => {
  test('default: creates a 0600 key on first start and reuses it after', async () => {
    const path = join(dir, 'state', 'node.key');
    const first = await loadNodeIdentity(path);
    expect(first.created).toBe(true);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    const second = await loadNodeIdentity(path);
    expect(second.created).toBe(false);
    expect(second.nodeId).toBe(first.nodeId);
    const signature = await second.account.signMessage({ message: 'hi' });
    expect(await verifyMessage({ address: first.nodeId, message: 'hi', signature })).toBe(true);
    expect(await readFile(path, 'utf8')).toMatch(/^0x[0-9a-f]{64}\n$/);
  });

  test('behavior: concurrent first starts agree on one key', async () => {
    const path = join(dir, 'race.key');
    const identities = await Promise.all(Array.from({ length: 8 }, () => loadNodeIdentity(path)));
    expect(new Set(identities.map((identity) => identity.nodeId)).size).toBe(1);
    expect(identities.filter((identity) => identity.created)).toHaveLength(1);
  });

  test('behavior: a key file readable by others is tightened to 0600', async () => {
    const path = join(dir, 'loose.key');
    await loadNodeIdentity(path);
    await chmod(path, 0o644);
    await loadNodeIdentity(path);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  test('error: a corrupt key file', async () => {
    const path = join(dir, 'bad.key');
    await writeFile(path, 'not a key\n', { mode: 0o600 });
    await expect(loadNodeIdentity(path)).rejects.toMatchObject({ code: 'identity_invalid' });
  });
});
