/**
 * A suspended node's earnings are held, on SQLite and PostgreSQL, through the app: linking it is
 * refused (403 `node_suspended`, param nodeId) and so is any payout of its owner (before the chain
 * is touched: this app has none), in the common error shape.
 */
import { nodeLinkText } from '@gpumesh/protocol/internal';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createTestApp, describeBackends, signIn, type TestApp } from '../testing/index.js';
import { Suspensions } from '../trust/standing/suspensions.js';

describeBackends('suspended node', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(backend, { label: 'suspended' });
  });
  afterAll(async () => t?.close());

  test('error: a suspended node cannot be linked, nor its owner paid', async () => {
    const ownerKey = privateKeyToAccount(generatePrivateKey());
    const nodeKey = privateKeyToAccount(generatePrivateKey());
    const nodeId = nodeKey.address.toLowerCase();
    const auth = { authorization: `Bearer ${await signIn(t.app, ownerKey)}` };
    const link = async () => {
      const nodeSignature = await nodeKey.signMessage({ message: nodeLinkText(nodeId, ownerKey.address) });
      return t.app.inject({
        method: 'POST',
        url: '/api/provider/nodes/link',
        headers: auth,
        payload: { nodeId, nodeSignature },
      });
    };
    const payout = () =>
      t.app.inject({
        method: 'POST',
        url: '/api/provider/payout',
        headers: { ...auth, 'idempotency-key': 'k-1' },
        payload: { token: 'USDC.s' },
      });
    expect((await link()).statusCode).toBe(200);
    // No chain here: an owner in good standing gets that far.
    expect((await payout()).json()).toMatchObject({ error: { code: 'chain_unavailable' } });

    await new Suspensions({ store: t.store.store, policy: t.config.trust }).suspendForReputation(
      nodeId,
      'failed verification',
      Date.now(),
    );
    const refused = await link();
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toEqual({
      error: {
        message: 'This node is suspended: it cannot be linked until an operator reinstates it.',
        type: 'permission_error',
        code: 'node_suspended',
        param: 'nodeId',
      },
    });
    const held = await payout();
    expect(held.statusCode).toBe(403);
    expect(held.json()).toEqual({
      error: {
        message: `Your node ${nodeId} is suspended: payouts are held until an operator reinstates it.`,
        type: 'permission_error',
        code: 'node_suspended',
        param: null,
      },
    });
  });
});
