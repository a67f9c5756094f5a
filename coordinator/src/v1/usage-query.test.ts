/** `GET /api/router/usage`: its days are checked as days of the calendar before any date math. */
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { isErrorBody } from '../errors.js';
import { createTestApp, signIn, type TestApp, testBackends } from '../testing/index.js';

// Validation happens before any query: one backend covers it.
const sqlite = testBackends().find((b) => b.name === 'sqlite')!;
let t: TestApp;
let headers: { authorization: string };
beforeAll(async () => {
  t = await createTestApp(sqlite, { label: 'usage-query' });
  headers = { authorization: `Bearer ${await signIn(t.app, privateKeyToAccount(generatePrivateKey()))}` };
});
afterAll(async () => {
  await t?.close();
});

const usage = (query: string) => t.app.inject({ url: `/api/router/usage?${query}`, headers });

test('default: a range of real days is summarized', async () => {
  const res = await usage('from=2026-03-01&to=2026-03-10');
  expect(res.statusCode).toBe(200);
  expect(res.json()).toMatchObject({ totals: { requests: 0 } });
});

test('error: a day the calendar does not have is a 400 in the common shape, naming the field', async () => {
  for (const [query, param] of [
    ['to=9999-99-99', 'to'],
    ['to=2026-13-45', 'to'],
    ['from=2026-02-30&to=2026-03-10', 'from'],
    ['from=2026-13-45', 'from'],
  ] as const) {
    const res = await usage(query);
    expect(res.statusCode, query).toBe(400);
    const body = res.json();
    expect(isErrorBody(body), query).toBe(true);
    expect(body.error, query).toMatchObject({
      code: 'invalid_request',
      param,
      message: `${param} must be a date, YYYY-MM-DD.`,
    });
  }
});
