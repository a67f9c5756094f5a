import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFrame, encodeFrame, signOwnerProof } from '@gpumesh/protocol';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, describe, expect, test } from 'vitest';
import { loadConfig } from './config.js';
import { startDaemon } from './daemon.js';
import { loadNodeIdentity } from './identity.js';
import { createFixedReplyRuntime } from './runtimes/fixed-reply-runtime.js';
import { CoordinatorPeer } from './testing/coordinator-peer.js';

const dir = await mkdtemp(join(tmpdir(), 'gpumesh-daemon-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('startDaemon', () => {
  test('default: health is 200 with counters while the hub socket is open, 503 after', async () => {
    const peer = new CoordinatorPeer();
    await once(peer.wss, 'listening');
    const config = loadConfig({
      env: {},
      flags: { coordinator: peer.url, 'state-dir': dir, 'health-port': '0', 'reconnect-min-ms': '50' },
    });
    const runtime = createFixedReplyRuntime({
      models: [{ id: 'fixed', family: 'chat', contextLength: 2048, maxConcurrency: 2 }],
      reply: 'one two three',
    });
    const daemon = await startDaemon(config, { runtime });
    const session = await peer.nextSession(0);
    await session.next('presence');
    const healthy = await fetch(daemon.health.url);
    expect(healthy.status).toBe(200);
    expect(await healthy.json()).toMatchObject({
      status: 'ok',
      nodeId: daemon.nodeId,
      hubConnected: true,
      runtimeAlive: true,
      presence: 'online',
      // The tier the coordinator's welcome granted, and what it means for this node.
      tier: 'basic',
      tierSummary: expect.stringContaining('at most 4 jobs at a time per model'),
      jobsInFlight: 0,
      capacity: 2,
    });

    const job = createFrame('job', {
      jobId: 'j1',
      kind: 'chat',
      model: 'fixed',
      request: { messages: [{ role: 'user', content: 'hi' }] },
      stream: false,
      timeoutMs: 5_000,
    });
    session.ws.send(encodeFrame(job));
    const { response } = await session.next('result');
    const served = await (await fetch(daemon.health.url)).json();
    expect(served.jobsServed).toBe(1);
    expect(served.tokensServed).toEqual({ prompt: response.usage.prompt_tokens, completion: 3 });
    // Default prices: 100_000_000 and 200_000_000 nanousd per million tokens.
    const expected = (BigInt(response.usage.prompt_tokens) * 100_000_000n + 3n * 200_000_000n) / 1_000_000n;
    expect(served.estimatedEarnings).toEqual({
      currency: 'USD',
      amount: expected.toString(),
      unit: 'nanousd',
      usd: Number(expected) / 1e9,
    });

    await peer.close();
    await expect.poll(async () => (await fetch(daemon.health.url)).status, { timeout: 5_000 }).toBe(503);
    expect((await (await fetch(daemon.health.url)).json()).hubConnected).toBe(false);
    await daemon.shutdown();
  });

  test('behavior: an owner wallet proof links the node to its staker', async () => {
    const peer = new CoordinatorPeer();
    await once(peer.wss, 'listening');
    const stateDir = join(dir, 'owned');
    const { nodeId } = await loadNodeIdentity(join(stateDir, 'node.key'));
    const owner = privateKeyToAccount(generatePrivateKey());
    const proof = await signOwnerProof(nodeId, owner);
    const config = loadConfig({
      env: {},
      flags: {
        coordinator: peer.url,
        'state-dir': stateDir,
        'health-port': '0',
        'owner-address': proof.address,
        'owner-signature': proof.signature,
      },
    });
    const runtime = createFixedReplyRuntime({
      models: [{ id: 'fixed', family: 'chat', contextLength: 64, maxConcurrency: 1 }],
    });
    const daemon = await startDaemon(config, { runtime });
    const session = await peer.nextSession(0);
    expect(session.nodeId).toBe(nodeId);
    expect(session.owner).toBe(owner.address);
    await daemon.shutdown();
    await peer.close();
  });
});
