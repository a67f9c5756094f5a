/**
 * Property test of every route that takes a body, with credentials that pass, so the input reaches
 * the deep checks: fast-check starts from a valid body and mutates NESTED fields — numbers up to
 * 1e308 and beyond (raw `1e400`), 40-digit numeric strings, nulls, 50,000-deep nesting, values
 * wrapped in single-element arrays, wrong types, removed fields, unknown fields. None may answer 5xx;
 * every error must be in the common shape. Real parts: a devnet (anvil) for the chain routes, a
 * reference node on the hub for /v1, PostgreSQL and SQLite for the store.
 */
import type { AddressInfo } from 'node:net';
import {
  REFERENCE_CHAT_MODEL,
  REFERENCE_EMBEDDING_MODEL,
  startReferenceNode,
} from '@gpumesh/protocol/conformance';
import fc from 'fast-check';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type Devnet, startDevnet } from './chain/devnet.js';
import { isErrorBody } from './errors.js';
import { HUB_PATH } from './hub/hub-plugin.js';
import { credit } from './ledger/credit.js';
import { createTestApp, describeBackends, signIn, type TestApp } from './testing/index.js';

/** Cases per body route (the issue asks for ≥ 2,000); lower it locally with the variable. */
const RUNS_PER_BODY_ROUTE = Number(process.env.GPUMESH_FUZZ_BODY_RUNS_PER_ROUTE ?? 2_000);
/** Nesting of the deep values (the depth that overflowed the frame encoder's JSON.stringify). */
const DEEP = 50_000;
const USD = 1_000_000_000n;
const ONE_PIXEL_PNG =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Path = (string | number)[];

/** Raw JSON text a mutation may put at a path (what JSON.stringify cannot write: deep or huge). */
const RAW: Record<string, string> = {
  deepArray: `${'['.repeat(DEEP)}${']'.repeat(DEEP)}`,
  deepObject: `${'{"a":'.repeat(DEEP)}1${'}'.repeat(DEEP)}`,
  overflow: '1e400',
  negativeOverflow: '-1e400',
  longNumber: '1234567890123456789012345678901234567890123',
};
const RAW_MARK = '\u0001raw:';

const digits40 = fc
  .array(fc.integer({ min: 0, max: 9 }), { minLength: 40, maxLength: 40 })
  .map((d) => d.join(''));
const hostileValue: fc.Arbitrary<Json | { raw: string }> = fc.oneof(
  fc.constantFrom<Json>(1e308, -1e308, 1e21, 1e300, 0, -0, -1, 0.5, 2 ** 53 + 1, 5e-324, 1.5, 4097),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
  digits40,
  digits40.map((d) => `${d}.${d}`),
  // Integers around 2^53 and 2^63 as decimal strings: amounts that overflow a bigint column.
  fc.bigInt({ min: 2n ** 50n, max: 2n ** 70n }).map(String),
  fc.constantFrom<Json>('1e+21', '1e21', '-1', '0.0000000001', 'NaN', 'Infinity', '', ' ', '0x', 'x'),
  fc.constant<Json>(null),
  fc.boolean(),
  fc.constantFrom<Json>({}, [], [null], [{}], { type: 'text' }, { type: 'text', text: 1 }),
  fc.string({ maxLength: 30 }),
  fc.constantFrom(...Object.values(RAW)).map((raw) => ({ raw })),
);

type Mutation =
  | { op: 'set'; path: Path; value: Json | { raw: string } }
  | { op: 'wrap'; path: Path }
  | { op: 'delete'; path: Path };

/** Every path inside `value` (containers and leaves), plus an unknown key in each object. */
function pathsOf(value: Json, prefix: Path = []): Path[] {
  const out: Path[] = prefix.length > 0 ? [prefix] : [];
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) out.push(...pathsOf(v, [...prefix, i]));
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) out.push(...pathsOf(v, [...prefix, k]));
    out.push([...prefix, 'unknown_field']);
  }
  return out;
}

function apply(base: Json, mutations: Mutation[]): string {
  const body = structuredClone(base);
  for (const m of mutations) {
    let parent = body as Record<string | number, Json>;
    for (const key of m.path.slice(0, -1)) {
      const next = parent?.[key];
      if (next === null || typeof next !== 'object') return JSON.stringify(body) ?? '';
      parent = next as Record<string | number, Json>;
    }
    const last = m.path.at(-1)!;
    if (m.op === 'delete') {
      if (Array.isArray(parent) && typeof last === 'number') parent.splice(last, 1);
      else delete parent[last];
    } else if (m.op === 'wrap') parent[last] = [parent[last] ?? null];
    else {
      const v = m.value;
      // A copy: fast-check hands out the same constant objects, and a later mutation must not edit them.
      parent[last] =
        v !== null && typeof v === 'object' && 'raw' in v
          ? `${RAW_MARK}${v.raw}`
          : structuredClone(v as Json);
    }
  }
  // The raw values (deep, overflowing) are spliced in as text: JSON.stringify could not write them.
  return JSON.stringify(body).replace(/"\\u0001raw:([^"]*)"/g, (_, raw: string) => raw);
}

function mutationsOf(base: Json): fc.Arbitrary<Mutation[]> {
  const path = fc.constantFrom(...pathsOf(base));
  const mutation: fc.Arbitrary<Mutation> = fc.oneof(
    { weight: 6, arbitrary: fc.record({ op: fc.constant('set' as const), path, value: hostileValue }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('wrap' as const), path }) },
    { weight: 1, arbitrary: fc.record({ op: fc.constant('delete' as const), path }) },
  );
  return fc.array(mutation, { minLength: 1, maxLength: 3 });
}

/**
 * The one 5xx that is an answer, not a failure: /v1 with provider preferences (a max_price of 0,
 * an order with fallbacks off) that no live node meets is 503 no_provider_available, as design.md
 * documents — the network cannot serve it now.
 */
function allowed5xx(url: string, res: { statusCode: number; body: string }): boolean {
  if (!url.startsWith('/v1/') || res.statusCode !== 503) return false;
  return (JSON.parse(res.body) as { error?: { code?: string } }).error?.code === 'no_provider_available';
}

let devnet: Devnet;
beforeAll(async () => {
  devnet = await startDevnet();
}, 120_000);
afterAll(async () => {
  await devnet?.stop();
});

describeBackends('every body route under nested mutations', (backend) => {
  let t: TestApp;
  let node: ReturnType<typeof startReferenceNode> | undefined;
  let jwt: string;
  let key: string;
  let address: string;
  const counts: Record<string, number> = {};

  beforeAll(async () => {
    t = await createTestApp(backend, {
      label: 'bodyfuzz',
      overrides: {
        // Small answers keep the cases that pass validation fast (the reference node emits one token per ms).
        router: { maxTokensCap: 4 },
        chain: {
          rpcUrl: devnet.rpcUrl,
          nativeSymbol: devnet.nativeSymbol,
          confirmations: 1,
          tokens: { ...devnet.tokens },
          stakingVaultKey: devnet.vaults.staking.privateKey,
          rewardsVaultKey: devnet.vaults.rewards.privateKey,
          treasuryKey: devnet.treasury.privateKey,
          stakingPool: devnet.stakingPool,
          slasherKey: devnet.vaults.staking.privateKey,
        },
      },
    });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const account = privateKeyToAccount(generatePrivateKey());
    address = account.address;
    jwt = await signIn(t.app, account);
    const user = (
      await t.app.inject({ method: 'GET', url: '/api/user', headers: { authorization: `Bearer ${jwt}` } })
    ).json() as { id: string };
    const created = await t.app.inject({
      method: 'POST',
      url: '/api/router/keys',
      headers: { authorization: `Bearer ${jwt}` },
      payload: { name: 'fuzz' },
    });
    key = (created.json() as { key: string }).key;
    await credit(t.db, { userId: user.id, amountNano: 1_000_000n * USD, ref: 'fuzz-seed' });
    const port = (t.app.server.address() as AddressInfo).port;
    node = startReferenceNode({ url: `ws://127.0.0.1:${port}${HUB_PATH}`, tokenDelayMs: 0, capacity: 8 });
    // Waits on the hub's own state (an event would need a hook the hub does not expose).
    const deadline = Date.now() + 30_000;
    while (
      !t.app.hub.index.pick({ modelId: REFERENCE_CHAT_MODEL }).ok ||
      !t.app.hub.index.pick({ modelId: REFERENCE_EMBEDDING_MODEL }).ok
    ) {
      if (Date.now() > deadline) throw new Error('the reference node did not come online');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }, 60_000);
  afterAll(async () => {
    console.info(`body fuzz [${backend.name}]: ${JSON.stringify(counts)}`);
    await node?.stop();
    await t?.close();
  });

  /** Valid bodies per route: the mutations start from something that passes. */
  const bases = (): Record<string, Json[]> => ({
    'POST /api/auth/verify': [{ address, message: 'Sign this message', signature: `0x${'ab'.repeat(65)}` }],
    'POST /api/router/keys': [{ name: 'fuzz key' }],
    'POST /api/provider/nodes/link': [
      { nodeId: `0x${'22'.repeat(20)}`, nodeSignature: `0x${'ab'.repeat(65)}` },
      {
        nodeId: `0x${'22'.repeat(20)}`,
        nodeSignature: `0x${'ab'.repeat(65)}`,
        ownerSignature: `0x${'cd'.repeat(65)}`,
      },
    ],
    'POST /api/provider/payout': [
      { token: 'USDC.s' },
      { token: 'native', amount: '0.5', to: `0x${'33'.repeat(20)}` },
    ],
    'POST /api/user/topup': [
      { paymentId: `0x${'ab'.repeat(32)}`, source: 'USDC.s', amountUsd: 1.5 },
      { paymentId: `0x${'cd'.repeat(32)}`, source: 'native', amountUsd: '2' },
    ],
    'POST /api/keys/proxy/withdraw': [
      { to: `0x${'11'.repeat(20)}`, token: 'native', amount: '1' },
      { to: `0x${'22'.repeat(20)}`, token: 'USDC.s', amount: '0.5' },
    ],
    'POST /tx': [
      { method: 'chain_stake', params: [address, `1.0000 ${devnet.nativeSymbol}`] },
      { method: 'chain_unstake', params: [address, `1.0000 ${devnet.nativeSymbol}`] },
      { method: 'chain_getStake', params: [address] },
      { method: 'chain_claim', params: [address] },
      { method: 'chain_getTiers', params: [] },
    ],
    'POST /v1/chat/completions': [
      {
        model: REFERENCE_CHAT_MODEL,
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
        stream_options: { include_usage: true },
        max_completion_tokens: 3,
        n: 1,
      },
      {
        model: REFERENCE_CHAT_MODEL,
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'user', content: [{ type: 'text', text: 'hi' }] },
        ],
        max_tokens: 2,
        temperature: 0.5,
        top_p: 0.9,
        stop: ['\n'],
        seed: 1,
        stream: false,
        provider: { order: ['x'], allow_fallbacks: true, max_price: { prompt: 1, completion: '2.5' } },
      },
      {
        // A vision request: its image resolved (a 1 × 1 PNG data URL) before routing.
        model: REFERENCE_CHAT_MODEL,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'what is this?' },
              { type: 'image_url', image_url: { url: ONE_PIXEL_PNG, detail: 'low' } },
            ],
          },
        ],
        max_tokens: 2,
      },
    ],
    'POST /v1/completions': [
      {
        model: REFERENCE_CHAT_MODEL,
        prompt: ['hi'],
        max_tokens: 2,
        provider: { max_price: { prompt: 1, completion: 2 } },
      },
      { model: REFERENCE_CHAT_MODEL, prompt: 'hi', stream: true, stop: 'x', seed: 7 },
    ],
    'POST /v1/embeddings': [
      {
        model: REFERENCE_EMBEDDING_MODEL,
        input: ['a', 'b'],
        encoding_format: 'float',
        provider: { max_price: { prompt: '1', completion: 1 } },
      },
      { model: REFERENCE_EMBEDDING_MODEL, input: 'a', encoding_format: 'base64', dimensions: 8 },
    ],
    // Multipart routes also parse JSON (the fields as one object): the handler's own checks meet
    // every mutation; multipart bodies themselves are fuzzed in v1/media/parse-multipart.test.ts.
    'POST /v1/audio/transcriptions': [
      {
        file: {},
        model: REFERENCE_CHAT_MODEL,
        language: 'en',
        prompt: 'p',
        response_format: 'srt',
        temperature: 0,
      },
    ],
    'POST /v1/audio/translations': [
      { file: {}, model: REFERENCE_CHAT_MODEL, response_format: 'verbose_json' },
    ],
    'POST /v1/audio/speech': [
      {
        model: REFERENCE_CHAT_MODEL,
        input: 'hi',
        voice: 'alloy',
        response_format: 'wav',
        speed: 1,
        stream_format: 'audio',
      },
    ],
    'POST /v1/responses': [
      {
        model: REFERENCE_CHAT_MODEL,
        instructions: 'be brief',
        input: [
          { role: 'user', content: [{ type: 'input_text', text: 'hi' }] },
          { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
          { type: 'function_call_output', call_id: 'c1', output: 'ok' },
        ],
        tools: [{ type: 'function', name: 'f', parameters: { type: 'object', properties: {} } }],
        text: { format: { type: 'json_object' } },
        max_output_tokens: 2,
        metadata: { a: 'b' },
        store: false,
      },
      { model: REFERENCE_CHAT_MODEL, input: 'hi', stream: true, max_output_tokens: 2, temperature: 0.5 },
    ],
    // No dev wallets in this app: every body is a 4xx (404 when well formed).
    'POST /api/auth/dev-sign-in': [{ address }],
  });

  test('property: nested mutations of every body never give 5xx, errors in the common shape', async () => {
    const bodyRoutes = t.app.ctx.routes
      .filter((r) => r.schema?.body !== undefined)
      .map((r) => `${r.method} ${r.url}`);
    const known = bases();
    // A body route added later without a base here fails, so it cannot escape the fuzz.
    expect(bodyRoutes.sort()).toEqual(Object.keys(known).sort());
    // GPUMESH_FUZZ_ROUTE narrows a local run to the routes containing it (the full run takes all).
    const only = process.env.GPUMESH_FUZZ_ROUTE;
    for (const [route, routeBases] of Object.entries(known)) {
      if (only && !route.includes(only)) continue;
      const [method, url] = route.split(' ') as ['POST', string];
      const authorization = url.startsWith('/v1/') ? `Bearer ${key}` : `Bearer ${jwt}`;
      counts[route] = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(...routeBases.map((b) => mutationsOf(b).map((m) => ({ base: b, m })))),
          async ({ base, m: mutations }) => {
            const payload = apply(base, mutations);
            const res = await t.app.inject({
              method,
              url,
              headers: { authorization, 'content-type': 'application/json' },
              payload,
            });
            counts[route]!++;
            if (res.statusCode >= 500 && !allowed5xx(url, res)) {
              throw new Error(
                `${route} → ${res.statusCode} ${res.body.slice(0, 300)} for ${payload.slice(0, 400)}`,
              );
            }
            if (res.statusCode >= 400) {
              const body = res.json() as unknown;
              if (!isErrorBody(body))
                throw new Error(`${route} → ${res.statusCode} not the common shape: ${res.body}`);
              if (/at .+\.(ts|js):\d+|select |insert |stack/i.test(res.body)) {
                throw new Error(`${route} → ${res.statusCode} leaks internals: ${res.body.slice(0, 200)}`);
              }
            }
          },
        ),
        {
          numRuns: RUNS_PER_BODY_ROUTE,
          seed: Number(process.env.GPUMESH_FUZZ_SEED ?? Date.now() % 2 ** 31),
        },
      );
      expect(counts[route]).toBeGreaterThanOrEqual(RUNS_PER_BODY_ROUTE);
    }
  }, 300_000);
});
