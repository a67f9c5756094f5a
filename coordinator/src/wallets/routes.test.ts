import { isAddress } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createTestApp, describeBackends, signIn, type TestApp } from '../testing/index.js';
import { createKeyring } from './keyring.js';
import { loadProxyAccount } from './load-proxy-account.js';

describeBackends('wallet routes', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(backend, { label: 'wallets' });
  });
  afterAll(async () => {
    await t?.close();
  });

  const wallets = async (token: string) => {
    const headers = { authorization: `Bearer ${token}` };
    const proxy = await t.app.inject({ method: 'GET', url: '/api/keys/proxy', headers });
    const native = await t.app.inject({ method: 'GET', url: '/api/keys/native', headers });
    expect(proxy.statusCode).toBe(200);
    expect(native.statusCode).toBe(200);
    return {
      ...(proxy.json() as { proxyAddress: string }),
      ...(native.json() as { nativeAccount: string; publicKey: string }),
    };
  };

  test('default: created at first sign-in, stable across sign-ins, different across users', async () => {
    const alice = privateKeyToAccount(generatePrivateKey());
    const bob = privateKeyToAccount(generatePrivateKey());
    const first = await wallets(await signIn(t.app, alice));
    expect(isAddress(first.proxyAddress, { strict: true })).toBe(true);
    expect(first.proxyAddress).not.toBe(alice.address);
    expect(first.nativeAccount).toMatch(/^[a-z1-5]{12}$/);
    expect(first.publicKey).toMatch(/^PUB_K1_/);
    expect(await wallets(await signIn(t.app, alice))).toEqual(first);
    const other = await wallets(await signIn(t.app, bob));
    expect(other.proxyAddress).not.toBe(first.proxyAddress);
    expect(other.nativeAccount).not.toBe(first.nativeAccount);
    expect(other.publicKey).not.toBe(first.publicKey);
  });

  test('behavior: loadProxyAccount signs as the proxy address; no plaintext key in the tables', async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const { proxyAddress } = await wallets(await signIn(t.app, account));
    const user = await t.db
      .selectFrom('users')
      .select('id')
      .where('address', '=', account.address)
      .executeTakeFirstOrThrow();
    const proxy = await loadProxyAccount(t.db, t.app.ctx.keyring, user.id);
    expect(proxy.address).toBe(proxyAddress);
    const rows = await t.db.selectFrom('wallets').selectAll().execute();
    const dump = JSON.stringify(rows).toLowerCase();
    // The real keys, decrypted the way the app does, appear nowhere in the raw rows.
    const mine = rows.find((r) => r.user_id === user.id)!;
    const proxyKey = t.app.ctx.keyring.decrypt(mine.proxy_key_enc, `wallet:proxy:${user.id}`);
    const nativeKey = t.app.ctx.keyring.decrypt(mine.native_key_enc, `wallet:native:${user.id}`);
    for (const key of [proxyKey, nativeKey]) expect(dump).not.toContain(key.slice(2).toLowerCase());
    // A private key would show as 64 hex chars (with or without 0x); none may appear anywhere.
    expect(dump).not.toMatch(/(^|[^0-9a-f])[0-9a-f]{64}([^0-9a-f]|$)/);
    // And the rows do not decrypt under another master key.
    const stranger = createKeyring(new Uint8Array(32).fill(7));
    await expect(loadProxyAccount(t.db, stranger, user.id)).rejects.toThrow();
  });
});
