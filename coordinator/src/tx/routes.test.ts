import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createTestApp, describeBackends, signIn, type TestApp } from '../testing/index.js';

// Without a chain RPC the chain routes exist and answer 503 chain_unavailable (no RPC text).
describeBackends('chain routes without a chain', (backend) => {
  let t: TestApp;
  let token: string;
  beforeAll(async () => {
    t = await createTestApp(backend, { label: 'nochain' });
    token = await signIn(t.app, privateKeyToAccount(generatePrivateKey()));
  });
  afterAll(async () => t?.close());

  test('error: /tx, top-up and withdraw are 503 chain_unavailable', async () => {
    const headers = { authorization: `Bearer ${token}` };
    for (const request of [
      { url: '/tx', payload: { method: 'chain_getStake', params: [`0x${'11'.repeat(20)}`] } },
      {
        url: '/api/user/topup',
        headers,
        payload: { paymentId: `0x${'ab'.repeat(32)}`, source: 'native', amountUsd: 1 },
      },
      {
        url: '/api/keys/proxy/withdraw',
        headers,
        payload: { to: `0x${'11'.repeat(20)}`, token: 'native', amount: '1' },
      },
    ]) {
      const response = await t.app.inject({ method: 'POST', ...request });
      expect(response.statusCode).toBe(503);
      expect(response.json().error).toMatchObject({ code: 'chain_unavailable', type: 'api_error' });
    }
  });

  test('error: a malformed /tx body is 400 in the common shape', async () => {
    const response = await t.app.inject({ method: 'POST', url: '/tx', payload: { params: [] } });
    expect(response.statusCode).toBe(400);
    expect(response.json().error.code).toBe('invalid_request');
  });
});
