import { SignJWT } from 'jose';
import { getAddress } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { isErrorBody } from '../errors.js';
import { createTestApp, describeBackends, signIn, type TestApp } from '../testing/index.js';

const DAY_MS = 24 * 60 * 60 * 1000;

describeBackends('auth routes', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(backend, { label: 'auth' });
  });
  afterAll(async () => {
    await t?.close();
  });

  const newAccount = () => privateKeyToAccount(generatePrivateKey());
  const getUser = (token: string) =>
    t.app.inject({ method: 'GET', url: '/api/user', headers: { authorization: `Bearer ${token}` } });
  const nonceFor = async (address: string) => {
    const res = await t.app.inject({ method: 'GET', url: `/api/auth/nonce?address=${address}` });
    expect(res.statusCode).toBe(200);
    return (res.json() as { message: string }).message;
  };
  const verify = (payload: Record<string, unknown>) =>
    t.app.inject({ method: 'POST', url: '/api/auth/verify', payload });
  const expect401 = (res: { statusCode: number; json(): unknown }) => {
    expect(res.statusCode).toBe(401);
    expect(isErrorBody(res.json())).toBe(true);
    expect((res.json() as { error: { code: string } }).error.code).toBe('invalid_credential');
  };

  test('default: sign in, and the JWT opens every authenticated route', async () => {
    const account = newAccount();
    const message = await nonceFor(account.address);
    expect(message.startsWith('Sign this message to authenticate with gpumesh.\n')).toBe(true);
    expect(message).toContain(`Address: ${account.address}`);
    expect(message).toContain('Chain ID: 800000');
    expect(message).toMatch(/^Nonce: [0-9a-f]{48}$/m);
    const signature = await account.signMessage({ message });
    const res = await verify({ address: account.address, message, signature });
    expect(res.statusCode).toBe(200);
    const { token } = res.json() as { token: string };
    const user = await getUser(token);
    expect(user.statusCode).toBe(200);
    expect(user.json()).toMatchObject({ address: account.address, credits: { balance: 0, spend: 0 } });

    const jwtRoutes = t.app.ctx.routes.filter(
      (r) => r.method !== 'HEAD' && JSON.stringify(r.schema?.security ?? []).includes('bearerJwt'),
    );
    expect(jwtRoutes.length).toBeGreaterThanOrEqual(4);
    for (const route of jwtRoutes.filter((r) => !r.url.endsWith('/logout'))) {
      const url = route.url.replace(/:(\w+)/g, 'x');
      const withToken = await t.app.inject({
        method: route.method as 'GET',
        url,
        headers: { authorization: `Bearer ${token}` },
      });
      expect(withToken.statusCode, `${route.method} ${route.url}`).not.toBe(401);
      expect(withToken.statusCode, `${route.method} ${route.url}`).toBeLessThan(500);
      const without = await t.app.inject({ method: route.method as 'GET', url });
      expect401(without);
    }
  });

  test('behavior: address in any case, stored checksummed; same user on every sign-in', async () => {
    const account = newAccount();
    const lower = account.address.toLowerCase();
    const message = await nonceFor(lower);
    expect(message).toContain(`Address: ${account.address}`);
    const signature = await account.signMessage({ message });
    const res = await verify({ address: lower, message, signature });
    expect(res.statusCode).toBe(200);
    const first = (await getUser((res.json() as { token: string }).token)).json() as {
      id: string;
      address: string;
    };
    expect(first.address).toBe(getAddress(lower));
    const again = (await getUser(await signIn(t.app, account))).json() as { id: string };
    expect(again.id).toBe(first.id);
  });

  test('behavior: the JWT stops working after 7 days', async () => {
    const token = await signIn(t.app, newAccount());
    t.clock.advance(7 * DAY_MS - 60_000);
    expect((await getUser(token)).statusCode).toBe(200);
    t.clock.advance(61_000);
    expect401(await getUser(token));
  });

  test('error: reused nonce', async () => {
    const account = newAccount();
    const message = await nonceFor(account.address);
    const signature = await account.signMessage({ message });
    expect((await verify({ address: account.address, message, signature })).statusCode).toBe(200);
    expect401(await verify({ address: account.address, message, signature }));
  });

  test('error: expired nonce', async () => {
    const account = newAccount();
    const message = await nonceFor(account.address);
    const signature = await account.signMessage({ message });
    t.clock.advance(10 * 60 * 1000 + 1);
    expect401(await verify({ address: account.address, message, signature }));
  });

  test('error: nonce issued to another address', async () => {
    const a = newAccount();
    const b = newAccount();
    const message = await nonceFor(a.address);
    const signature = await b.signMessage({ message });
    expect401(await verify({ address: b.address, message, signature }));
  });

  test('error: message altered by one character (and the nonce is spent)', async () => {
    const account = newAccount();
    const message = await nonceFor(account.address);
    const altered = message.replace('gpumesh.', 'gpumesh!');
    expect(altered).not.toBe(message);
    expect401(
      await verify({
        address: account.address,
        message: altered,
        signature: await account.signMessage({ message: altered }),
      }),
    );
    // consumed on the failed attempt: the genuine message no longer works either
    expect401(
      await verify({ address: account.address, message, signature: await account.signMessage({ message }) }),
    );
  });

  test('error: signature by another key', async () => {
    const account = newAccount();
    const message = await nonceFor(account.address);
    const signature = await newAccount().signMessage({ message });
    expect401(await verify({ address: account.address, message, signature }));
  });

  test('error: malformed signature or address', async () => {
    const account = newAccount();
    for (const bad of ['0x1234', 'zz', '0x', `0x${'00'.repeat(65)}`, `${'ab'.repeat(65)}`]) {
      const message = await nonceFor(account.address);
      expect401(await verify({ address: account.address, message, signature: bad }));
    }
    for (const bad of ['0x123', account.address.slice(0, -1), 'hello', `${account.address}00`]) {
      const message = await nonceFor(account.address);
      expect401(await verify({ address: bad, message, signature: await account.signMessage({ message }) }));
    }
  });

  test('error: tampered JWT', async () => {
    const token = await signIn(t.app, newAccount());
    const [header, payload, sig] = token.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const forged = Buffer.from(JSON.stringify({ ...claims, sub: 'someone-else' })).toString('base64url');
    expect401(await getUser(`${header}.${forged}.${sig}`));
    const flipped = sig[5] === 'A' ? 'B' : 'A';
    expect401(await getUser(`${header}.${payload}.${sig.slice(0, 5)}${flipped}${sig.slice(6)}`));
    expect401(await getUser('not-a-jwt'));
  });

  test('error: JWT with alg none', async () => {
    const token = await signIn(t.app, newAccount());
    const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString());
    const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
    const body = Buffer.from(JSON.stringify(claims)).toString('base64url');
    expect401(await getUser(`${header}.${body}.`));
    // and a token signed with some other key
    const other = await new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(new Uint8Array(32));
    expect401(await getUser(other));
  });

  test('error: logged-out JWT', async () => {
    const account = newAccount();
    const token = await signIn(t.app, account);
    const other = await signIn(t.app, account);
    const out = await t.app.inject({
      method: 'POST',
      url: '/api/auth/logout',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(out.statusCode).toBe(204);
    expect401(await getUser(token));
    expect401(
      await t.app.inject({
        method: 'POST',
        url: '/api/auth/logout',
        headers: { authorization: `Bearer ${token}` },
      }),
    );
    expect((await getUser(other)).statusCode).toBe(200);
  });

  test('error: nonce for a malformed address is 400', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/auth/nonce?address=0x12' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: { code: 'invalid_request', param: 'address' } });
  });
});
