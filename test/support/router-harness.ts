/**
 * The router end to end over real sockets (test/router-e2e*.test.ts): a coordinator listening on a
 * port, nodes connected over WebSocket (the node daemon on its fixed-reply runtime, or the
 * misbehaving stand-in), HTTP requests with a real sk- key, the real ledger.
 */
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import {
  type FixedReplyNode,
  type NodeDaemon,
  type NodeDaemonOptions,
  startFixedReplyNode,
  startNodeDaemon,
  usdOffer,
} from '@gpumesh/node/testing';
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { generatePrivateKey } from 'viem/accounts';
import { buildApp } from '../../coordinator/src/app.js';
import { loadConfig } from '../../coordinator/src/config.js';
import type { Database } from '../../coordinator/src/db/schema.js';
import { HUB_PATH } from '../../coordinator/src/hub/hub-plugin.js';
import type { Ledger } from '../../coordinator/src/ledger/ledger.js';
import { expectBooksBalanced } from '../../coordinator/src/testing/expect-books-balanced.js';
import type { TestBackend, TestDatabase } from '../../coordinator/src/testing/test-backends.js';
import { until } from '../../coordinator/src/testing/until.js';
import { estimatePromptTokens } from '../../coordinator/src/v1/estimate-prompt-tokens.js';
import { newApiClient } from './api-client.js';
import { FEE_BPS, USD } from './expected-charge.js';

export type Harness = {
  app: FastifyInstance;
  db: Kysely<Database>;
  ledger: Ledger;
  base: string;
  wsUrl: string;
  key: string;
  keyId: string;
  userId: string;
  jwt: string;
  nodes: (FixedReplyNode | NodeDaemon)[];
  close(): Promise<void>;
};

/** A coordinator on `backend` listening on a free port, with one user and its API key. */
export async function startRouterHarness(
  backend: TestBackend,
  label: string,
  overrides: Record<string, unknown> = {},
): Promise<Harness> {
  const store: TestDatabase = await backend.open(label);
  const config = loadConfig({
    overrides: {
      dataDir: store.dataDir,
      databaseUrl: store.databaseUrl,
      databaseSchema: store.databaseSchema,
      masterKey: randomBytes(32).toString('hex'),
      logLevel: 'silent',
      rateLimit: { enabled: false },
      platformFeeBps: FEE_BPS,
      ...overrides,
    },
  });
  // Every test node's owner counts as platinum (64 concurrent jobs), so concurrency tests are not capped at 1.
  const app = await buildApp({
    config,
    store: store.store,
    logger: false,
    tierOf: async () => 'platinum',
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as AddressInfo).port;
  const { jwt, userId, key, keyId } = await newApiClient(app, { keyName: 'e2e' });
  const nodes: (FixedReplyNode | NodeDaemon)[] = [];
  return {
    app,
    db: store.db,
    ledger: app.ctx.ledger,
    base: `http://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${port}${HUB_PATH}`,
    key,
    keyId,
    userId,
    jwt,
    nodes,
    async close() {
      for (const n of nodes) n.kill();
      // Whatever the suite did, the ledger adds up at its end.
      await expectBooksBalanced(app.ctx);
      await app.close();
      await store.close();
    },
  };
}

const OWNER = generatePrivateKey();
/** What the fixed-reply nodes answer, as tokens (the stand-in's default too). */
const DEFAULT_REPLY = ['Hello', ' from', ' a', ' fixed', ' node', '.'];

/** A real node daemon (in this process, on its fixed-reply runtime), online in the hub. */
export async function addNode(h: Harness, options: Partial<NodeDaemonOptions> = {}) {
  const node = await startNodeDaemon({
    url: h.wsUrl,
    ownerPrivateKey: OWNER,
    models: [usdOffer('m', USD, 2n * USD)],
    replyTokens: DEFAULT_REPLY,
    ...options,
  });
  h.nodes.push(node);
  await until(() => h.app.hub.index.node(node.nodeId)?.state === 'online');
  return node;
}

/**
 * A misbehaving node stand-in (fixed-reply-node.ts), for what no honest daemon does: lie about
 * usage, overstate chunk.tokens, die abruptly mid-stream.
 */
export async function addMisbehavingNode(
  h: Harness,
  options: Partial<Parameters<typeof startFixedReplyNode>[0]> = {},
) {
  const node = startFixedReplyNode({
    url: h.wsUrl,
    ownerPrivateKey: OWNER,
    models: [usdOffer('m', USD, 2n * USD)],
    ...options,
  });
  h.nodes.push(node);
  await node.ready;
  await until(() => h.app.hub.index.node(node.nodeId)?.state === 'online');
  return node;
}

/** POSTs a chat for model m ("hi") with the harness's key; `body` adds or overrides fields. */
export async function chat(h: Harness, body: Record<string, unknown>) {
  const res = await fetch(`${h.base}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${h.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }], ...body }),
  });
  return { status: res.status, headers: res.headers, body: (await res.text()) as string };
}

/** The harness user's usage rows, oldest first, once the settlements committed. */
export async function usageRows(h: Harness) {
  await h.ledger.idle(); // settlements commit after the answer
  return h.db
    .selectFrom('usage_records')
    .selectAll()
    .where('user_id', '=', h.userId)
    .orderBy('created_at')
    .execute();
}

/** What a cut request pays for the prompt of `chat()` ("hi") when the node sends no count. */
export const HI_PROMPT_BOUND = estimatePromptTokens('chat', { messages: [{ role: 'user', content: 'hi' }] });
