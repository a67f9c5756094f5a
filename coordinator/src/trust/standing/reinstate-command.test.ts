/**
 * `gpumesh-coordinator reinstate`, on SQLite and PostgreSQL, against the store a running app uses:
 * a suspended node goes back on probation (counters and evidence cleared) with a `trust_audit` row
 * (actor operator) and can be linked again; an unknown node, a node not suspended and a missing
 * reason are refused with a message, nothing changed.
 */
import { nodeLinkText } from '@gpumesh/protocol/internal';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { TRUST_STATUS } from '../../db/tables/trust.js';
import { createTestApp, describeBackends, signIn, type TestApp } from '../../testing/index.js';
import { reinstateCommand } from './reinstate-command.js';
import { Suspensions } from './suspensions.js';

describeBackends('reinstate command', (backend) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp(backend, { label: 'reinstate' });
  });
  afterAll(async () => t?.close());

  test('default: back on probation with an audit row; refusals change nothing', async () => {
    const ownerKey = privateKeyToAccount(generatePrivateKey());
    const nodeKey = privateKeyToAccount(generatePrivateKey());
    const nodeId = nodeKey.address.toLowerCase();
    const auth = { authorization: `Bearer ${await signIn(t.app, ownerKey)}` };
    const link = async () =>
      t.app.inject({
        method: 'POST',
        url: '/api/provider/nodes/link',
        headers: auth,
        payload: {
          nodeId,
          nodeSignature: await nodeKey.signMessage({ message: nodeLinkText(nodeId, ownerKey.address) }),
        },
      });
    await new Suspensions({ store: t.store.store, policy: t.config.trust }).suspendForReputation(
      nodeId,
      'failed verification',
      Date.now(),
    );
    expect((await link()).statusCode).toBe(403);

    // The operator's command, on the app's store (the same flags a server would take).
    const overrides = {
      dataDir: t.config.dataDir,
      databaseUrl: t.config.databaseUrl,
      databaseSchema: t.config.databaseSchema,
    };
    const lines: string[] = [];
    const io = { out: (l: string) => lines.push(`out ${l}`), err: (l: string) => lines.push(`err ${l}`) };
    const stranger = privateKeyToAccount(generatePrivateKey()).address.toLowerCase();
    expect(await reinstateCommand([nodeId], {}, io, overrides)).toBe(2);
    expect(await reinstateCommand([stranger, '--reason', 'appeal'], {}, io, overrides)).toBe(1);
    expect(await reinstateCommand([nodeId, '--reason', 'verifier misconfigured'], {}, io, overrides)).toBe(0);
    expect(await reinstateCommand([nodeId, '--reason=again'], {}, io, overrides)).toBe(1);
    expect(lines).toEqual([
      'err usage: gpumesh-coordinator reinstate <nodeId> --reason "why the suspension is lifted" [config flags]',
      `err reinstate: node ${stranger} has no standing here (never verified, never suspended); nothing changed`,
      expect.stringMatching(
        new RegExp(`^out reinstated ${nodeId}: on probation \\(was suspended after 0 failed`),
      ),
      `err reinstate: node ${nodeId} is probation, not suspended; nothing changed`,
    ]);

    const trust = await t.db
      .selectFrom('node_trust')
      .selectAll()
      .where('node_id', '=', nodeId)
      .executeTakeFirstOrThrow();
    expect(trust).toMatchObject({ status: TRUST_STATUS.probation, reason: null });
    expect([Number(trust.passed), Number(trust.failed)]).toEqual([0, 0]);
    const audit = await t.db.selectFrom('trust_audit').selectAll().where('node_id', '=', nodeId).execute();
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      action: 'reinstate',
      actor: 'operator',
      reason: 'verifier misconfigured',
    });
    expect(JSON.parse(audit[0]!.details)).toEqual({
      before: { status: 'suspended', passed: 0, failed: 0, reason: 'failed verification' },
    });
    expect(
      await t.db.selectFrom('trust_audit').select('id').where('node_id', '=', stranger).execute(),
    ).toEqual([]);
    // Reinstated: it links again.
    expect((await link()).statusCode).toBe(200);
  });
});
