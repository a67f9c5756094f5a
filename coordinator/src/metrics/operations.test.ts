import { afterAll, beforeAll, expect, test } from 'vitest';
import { PAGES_CSP } from '../pages/pages-routes.js';
import { createTestApp, describeBackends, type TestApp } from '../testing/index.js';

describeBackends('operations routes in the built app', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(backend, { label: 'ops' });
  });
  afterAll(async () => {
    await t?.close();
  });

  test('default: /healthz and /readyz answer 200', async () => {
    expect((await t.app.inject('/healthz')).json()).toEqual({ status: 'ok' });
    const ready = await t.app.inject('/readyz');
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: 'ready', checks: { database: 'ok' } });
  });

  test('behavior: /metrics counts requests by route pattern', async () => {
    const address = '0x000000000000000000000000000000000000dEaD';
    await t.app.inject(`/api/auth/nonce?address=${address}`);
    await t.app.inject(`/api/auth/nonce?address=${address}`);
    const text = (await t.app.inject('/metrics')).body;
    expect(text).toContain(
      'gpumesh_http_requests_total{method="GET",route="/api/auth/nonce",status="200"} 2',
    );
    expect(text).toMatch(/gpumesh_nodes|# TYPE gpumesh_nodes gauge/);
  });

  test('behavior: pages carry their strict CSP, not the default one', async () => {
    for (const path of ['/network', '/dashboard']) {
      const response = await t.app.inject(path);
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-security-policy']).toBe(PAGES_CSP);
      expect(response.headers['x-content-type-options']).toBe('nosniff'); // helmet still applies
    }
  });

  test('error: unknown asset → 404 in the common error shape', async () => {
    const response = await t.app.inject('/assets/nope.js');
    expect(response.statusCode).toBe(404);
    expect(response.json()).toMatchObject({ error: { code: 'not_found', param: null } });
  });
});
