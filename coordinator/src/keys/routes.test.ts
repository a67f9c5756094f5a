import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { isErrorBody } from '../errors.js';
import { createTestApp, describeBackends, signIn, type TestApp } from '../testing/index.js';
import { authenticateApiKey, KEY_CACHE_TTL_MS } from './authenticate-api-key.js';

describeBackends('keys routes', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(backend, { label: 'keys' });
  });
  afterAll(async () => {
    await t?.close();
  });

  const session = async () => {
    const account = privateKeyToAccount(generatePrivateKey());
    const headers = { authorization: `Bearer ${await signIn(t.app, account)}` };
    const create = (name: string) =>
      t.app.inject({ method: 'POST', url: '/api/router/keys', headers, payload: { name } });
    const list = async () =>
      (
        (await t.app.inject({ method: 'GET', url: '/api/router/keys', headers })).json() as {
          data: {
            id: string;
            status: string;
            prefix: string;
            name: string;
            spend: number;
            lastUsedAt: string | null;
          }[];
        }
      ).data;
    const revoke = (id: string) => t.app.inject({ method: 'DELETE', url: `/api/router/keys/${id}`, headers });
    return { account, headers, create, list, revoke };
  };

  test('default: create, list with prefix, authenticate', async () => {
    const s = await session();
    const res = await s.create('my laptop');
    expect(res.statusCode).toBe(200);
    const { key, id } = res.json() as { key: string; id: string };
    expect(key).toMatch(/^sk-[0-9A-Za-z]{40}$/);
    const [listed] = await s.list();
    expect(listed).toMatchObject({
      id,
      name: 'my laptop',
      prefix: key.slice(0, 9),
      status: 'active',
      spend: 0,
      lastUsedAt: null,
    });
    expect(JSON.stringify(await s.list())).not.toContain(key.slice(9));
    const auth = await authenticateApiKey(t.db, key, { accepted: t.app.ctx.acceptedKeys, clock: t.clock });
    expect(auth?.keyId).toBe(id);
    expect((await s.list())[0]?.lastUsedAt).not.toBeNull();
    expect(await authenticateApiKey(t.db, `${key.slice(0, -1)}${key.endsWith('x') ? 'y' : 'x'}`)).toBeNull();
    expect(await authenticateApiKey(t.db, 'nonsense')).toBeNull();
  });

  test('error: the 11th active key is refused; a revoked key no longer counts nor authenticates', async () => {
    const s = await session();
    const keys: { id: string; key: string }[] = [];
    for (let i = 0; i < 10; i++) {
      const res = await s.create(`k${i}`);
      expect(res.statusCode).toBe(200);
      keys.push(res.json() as { id: string; key: string });
    }
    const eleventh = await s.create('k10');
    expect(eleventh.statusCode).toBe(409);
    expect(isErrorBody(eleventh.json())).toBe(true);
    expect(eleventh.json()).toMatchObject({ error: { code: 'key_limit_reached' } });
    // Accepted (and so cached) first: the revocation in this process must still refuse it at once.
    expect(await authenticateApiKey(t.db, keys[0]!.key, { accepted: t.app.ctx.acceptedKeys })).not.toBeNull();
    const revoked = await s.revoke(keys[0]!.id);
    expect(revoked.statusCode).toBe(200);
    expect(revoked.json()).toEqual({ id: keys[0]!.id, status: 'revoked' });
    expect(await authenticateApiKey(t.db, keys[0]!.key, { accepted: t.app.ctx.acceptedKeys })).toBeNull();
    expect(await authenticateApiKey(t.db, keys[1]!.key, { accepted: t.app.ctx.acceptedKeys })).not.toBeNull();
    expect((await s.create('k10')).statusCode).toBe(200);
    expect((await s.create('k11')).statusCode).toBe(409);
    const listed = await s.list();
    expect(listed).toHaveLength(11);
    expect(listed.filter((k) => k.status === 'active')).toHaveLength(10);
    expect((await s.revoke(keys[0]!.id)).statusCode).toBe(200); // repeating is harmless
  });

  test('behavior: a key revoked through another replica is refused once the accepted key expires', async () => {
    const s = await session();
    const { id, key } = (await s.create('shared')).json() as { id: string; key: string };
    expect(await authenticateApiKey(t.db, key, { accepted: t.app.ctx.acceptedKeys, clock: t.clock })).toEqual(
      { keyId: id, userId: expect.any(String), limitNano: null },
    );
    // Another replica revokes it: a write to the shared database this process does not see.
    await t.db.updateTable('api_keys').set({ status: 'revoked' }).where('id', '=', id).execute();
    expect(
      await authenticateApiKey(t.db, key, { accepted: t.app.ctx.acceptedKeys, clock: t.clock }),
    ).not.toBeNull();
    t.clock.advance(KEY_CACHE_TTL_MS);
    expect(
      await authenticateApiKey(t.db, key, { accepted: t.app.ctx.acceptedKeys, clock: t.clock }),
    ).toBeNull();
  });

  test('behavior: concurrent creates never pass the limit', async () => {
    const s = await session();
    const results = await Promise.all(Array.from({ length: 16 }, (_, i) => s.create(`c${i}`)));
    expect(results.filter((r) => r.statusCode === 200)).toHaveLength(10);
    expect(results.filter((r) => r.statusCode === 409)).toHaveLength(6);
  });

  test("error: one user can neither list nor revoke another user's keys", async () => {
    const alice = await session();
    const bob = await session();
    const { id, key } = (await alice.create('alice')).json() as { id: string; key: string };
    expect(await bob.list()).toEqual([]);
    const attempt = await bob.revoke(id);
    expect(attempt.statusCode).toBe(404);
    expect(attempt.json()).toMatchObject({ error: { code: 'not_found' } });
    expect(await authenticateApiKey(t.db, key)).not.toBeNull();
    expect((await alice.list())[0]?.status).toBe('active');
  });

  test('error: names are bounded', async () => {
    const s = await session();
    for (const name of ['', ' leading', 'x'.repeat(65), 'emoji 🙂', 'semi;colon', 'new\nline']) {
      const res = await s.create(name);
      expect(res.statusCode, JSON.stringify(name)).toBe(400);
      expect(res.json()).toMatchObject({ error: { code: 'invalid_request', param: 'name' } });
    }
  });

  test('behavior: the raw table holds no key secret', async () => {
    const s = await session();
    const secrets = [];
    for (let i = 0; i < 3; i++) secrets.push(((await s.create(`raw${i}`)).json() as { key: string }).key);
    const dump = JSON.stringify(await t.db.selectFrom('api_keys').selectAll().execute());
    for (const secret of secrets) {
      expect(dump).not.toContain(secret);
      expect(dump).not.toContain(secret.slice(9));
    }
  });
});
