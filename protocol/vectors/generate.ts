/**
 * Writes the golden vectors under protocol/vectors/. Run once when the protocol changes:
 *   node --conditions=gpumesh-source --import tsx protocol/vectors/generate.ts
 * The keys are well-known development keys (anvil accounts 1 and 2), never use them for value.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { privateKeyToAccount } from 'viem/accounts';
import { referenceManifest } from '../src/conformance/reference/reference-manifest.js';
import {
  canonicalJson,
  challengeText,
  createFrame,
  type Frame,
  ownerProofText,
  prefixKeys,
  signChallenge,
  signManifest,
  signOwnerProof,
} from '../src/index.js';

const NODE_KEY = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';
const OWNER_KEY = '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a';
const node = privateKeyToAccount(NODE_KEY);
const owner = privateKeyToAccount(OWNER_KEY);
const dir = new URL('.', import.meta.url).pathname;

const challenge = createFrame('challenge', {
  nonce: '5f1d3c0b9a8e7d6c5b4a39281706f5e4',
  issuedAt: '2026-01-01T00:00:00.000Z',
  expiresAt: '2026-01-01T00:01:00.000Z',
  coordinatorId: 'coordinator-eu-1',
});
const manifest = { ...referenceManifest(node.address, '2026-01-01T00:00:01.000Z'), owner: owner.address };
const ownerProof = await signOwnerProof(node.address, owner);
const usage = { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 };
const prefixMessages = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: 'Hello!' },
];

const valid: Record<string, Frame> = {
  hello: createFrame('hello', {
    nodeId: node.address,
    role: 'cpu',
    versions: [0],
    software: { name: 'gpumesh-node', version: '0.1.0' },
  }),
  challenge,
  auth: createFrame('auth', { signature: await signChallenge(challenge, node), owner: ownerProof }),
  welcome: createFrame('welcome', {
    version: 0,
    sessionId: 'c0ffee00-0000-4000-8000-000000000001',
    heartbeatIntervalMs: 10000,
    ttlMs: 20000,
    maxFrameBytes: 4194304,
    tier: 'basic',
    scopes: ['infer.chat', 'infer.text', 'infer.embed', 'infer.vision', 'infer.voice'],
  }),
  manifest: createFrame('manifest', { manifest, signature: await signManifest(manifest, node) }),
  manifest_ack: createFrame('manifest_ack', {
    scopes: ['infer.chat', 'infer.embed'],
    models: ['tiny-chat', 'tiny-embed'],
  }),
  presence: createFrame('presence', {
    status: 'online',
    load: { inFlight: 0, capacity: 2 },
    prefixCache: [{ model: 'tiny-chat', keys: prefixKeys('tiny-chat', null, prefixMessages).reverse() }],
  }),
  ping: createFrame('ping', { ts: 1767225600000 }),
  pong: createFrame('pong', { ts: 1767225600000 }),
  job: createFrame('job', {
    jobId: 'job-7b1e2f',
    kind: 'chat',
    model: 'tiny-chat',
    request: {
      model: 'tiny-chat',
      messages: [{ role: 'user', content: 'Hello!' }],
      max_tokens: 3,
      stream: true,
    },
    stream: true,
    timeoutMs: 120000,
  }),
  chunk: createFrame('chunk', {
    jobId: 'job-7b1e2f',
    seq: 0,
    chunk: {
      id: 'chatcmpl-1',
      object: 'chat.completion.chunk',
      created: 1767225600,
      model: 'tiny-chat',
      choices: [{ index: 0, delta: { role: 'assistant', content: 'Hi' }, finish_reason: null }],
    },
    tokens: 1,
  }),
  result: createFrame('result', {
    jobId: 'job-7b1e2f',
    response: {
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1767225600,
      model: 'tiny-chat',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hi there!' }, finish_reason: 'stop' }],
      usage: { ...usage, prompt_tokens_details: { cached_tokens: 8 } },
    },
  }),
  error: createFrame('error', {
    jobId: 'job-7b1e2f',
    code: 'model_not_found',
    message: 'This node does not serve gpt-x.',
    retryable: true,
  }),
  cancel: createFrame('cancel', { jobId: 'job-7b1e2f', reason: 'client disconnected' }),
  drain: createFrame('drain', { deadlineMs: 30000 }),
  bye: createFrame('bye', { reason: 'shutdown' }),
};

const ping = '{"v":0,"type":"ping","ts":1}';
const invalid: Record<
  string,
  { description: string; error: string; frame?: unknown; text?: string; base64?: string; maxBytes?: number }
> = {
  'not-json': { description: 'truncated JSON', text: '{"v":0,"type":"ping",', error: 'malformed_frame' },
  'json-array': {
    description: 'a JSON array, not an object',
    text: '[{"v":0,"type":"ping","ts":1}]',
    error: 'malformed_frame',
  },
  'json-null': { description: 'JSON null', text: 'null', error: 'malformed_frame' },
  'invalid-utf8': {
    description: 'bytes that are not UTF-8',
    base64: Buffer.from([0x7b, 0xc3, 0x28, 0x7d]).toString('base64'),
    error: 'malformed_frame',
  },
  'too-large': {
    description: 'a valid ping over a 16-byte limit',
    text: ping,
    maxBytes: 16,
    error: 'frame_too_large',
  },
  'unknown-type': {
    description: 'type not in the grammar',
    frame: { v: 0, type: 'register' },
    error: 'unknown_type',
  },
  'missing-type': { description: 'no type', frame: { v: 0, ts: 1 }, error: 'unknown_type' },
  'prototype-type': {
    description: 'type naming an object prototype member',
    frame: { v: 0, type: '__proto__' },
    error: 'unknown_type',
  },
  'future-version': {
    description: 'v 1 (this grammar is v 0)',
    frame: { v: 1, type: 'ping', ts: 1 },
    error: 'unsupported_version',
  },
  'version-string': {
    description: 'v as a string',
    frame: { v: '0', type: 'ping', ts: 1 },
    error: 'schema_violation',
  },
  'missing-version': { description: 'no v', frame: { type: 'ping', ts: 1 }, error: 'schema_violation' },
  'hello-bad-node-id': {
    description: 'nodeId is not an EVM address',
    frame: { ...valid.hello, nodeId: '0x1234' },
    error: 'schema_violation',
  },
  'hello-unknown-role': {
    description: 'role outside gpu|cpu|network',
    frame: { ...valid.hello, role: 'tpu' },
    error: 'schema_violation',
  },
  'hello-no-versions': {
    description: 'empty versions list',
    frame: { ...valid.hello, versions: [] },
    error: 'schema_violation',
  },
  'auth-short-signature': {
    description: 'signature is not 65 bytes',
    frame: { v: 0, type: 'auth', signature: '0xdeadbeef' },
    error: 'schema_violation',
  },
  'welcome-unknown-tier': {
    description: 'tier outside the ladder',
    frame: { ...valid.welcome, tier: 'diamond' },
    error: 'schema_violation',
  },
  'manifest-price-number': {
    description: 'a price given as a JSON number instead of an integer string',
    frame: {
      ...valid.manifest,
      manifest: {
        ...manifest,
        models: [
          { ...manifest.models[0], price: { currency: 'USD', inputPerMTok: 0.1, outputPerMTok: '1' } },
        ],
      },
    },
    error: 'schema_violation',
  },
  'manifest-unknown-scope': {
    description: 'a scope that does not exist',
    frame: { ...valid.manifest, manifest: { ...manifest, scopes: ['infer.everything'] } },
    error: 'schema_violation',
  },
  'presence-connecting': {
    description: 'a node cannot report connecting',
    frame: { ...valid.presence, status: 'connecting' },
    error: 'schema_violation',
  },
  'ping-negative-ts': {
    description: 'ts below zero',
    frame: { v: 0, type: 'ping', ts: -1 },
    error: 'schema_violation',
  },
  'job-unknown-kind': {
    description: 'kind outside chat|completion|embedding',
    frame: { ...valid.job, kind: 'image' },
    error: 'schema_violation',
  },
  'chunk-fractional-seq': {
    description: 'seq is not an integer',
    frame: { ...valid.chunk, seq: 1.5 },
    error: 'schema_violation',
  },
  'chunk-negative-tokens': {
    description: 'tokens is a count, never negative',
    frame: { ...valid.chunk, tokens: -1 },
    error: 'schema_violation',
  },
  'result-without-usage': {
    description: 'a result must carry usage',
    frame: { v: 0, type: 'result', jobId: 'job-1', response: { object: 'chat.completion', choices: [] } },
    error: 'schema_violation',
  },
  'manifest-cached-price-above-input': {
    description: 'v0.5: cachedInputPerMTok above inputPerMTok',
    frame: {
      ...valid.manifest,
      manifest: {
        ...manifest,
        models: [
          {
            ...manifest.models[0],
            price: { currency: 'USD', inputPerMTok: '100', outputPerMTok: '200', cachedInputPerMTok: '101' },
          },
        ],
      },
    },
    error: 'schema_violation',
  },
  'ping-prefix-cache-too-many-keys': {
    description: 'v0.5: 65 prefix keys for one model (at most 64)',
    frame: {
      v: 0,
      type: 'ping',
      ts: 1,
      prefixCache: [{ model: 'tiny-chat', keys: Array.from({ length: 65 }, () => '0123456789abcdef') }],
    },
    error: 'schema_violation',
  },
  'presence-prefix-key-short': {
    description: 'v0.5: a prefix key is 16 lowercase hex digits',
    frame: { ...valid.presence, prefixCache: [{ model: 'tiny-chat', keys: ['0123456789ABCDEF'] }] },
    error: 'schema_violation',
  },
  'result-cached-above-prompt': {
    description: 'v0.5: cached_tokens above prompt_tokens',
    frame: {
      ...valid.result,
      response: {
        ...(valid.result as { response: object }).response,
        usage: { ...usage, prompt_tokens_details: { cached_tokens: 13 } },
      },
    },
    error: 'schema_violation',
  },
  'error-code-uppercase': {
    description: 'codes are snake_case',
    frame: { ...valid.error, code: 'ModelNotFound' },
    error: 'schema_violation',
  },
};

rmSync(`${dir}valid`, { recursive: true, force: true });
rmSync(`${dir}invalid`, { recursive: true, force: true });
mkdirSync(`${dir}valid`, { recursive: true });
mkdirSync(`${dir}invalid`, { recursive: true });
mkdirSync(`${dir}identity`, { recursive: true });
const write = (path: string, value: unknown) =>
  writeFileSync(`${dir}${path}`, `${JSON.stringify(value, null, 2)}\n`);
for (const [type, frame] of Object.entries(valid))
  write(`valid/${type}.json`, { description: `a valid ${type} frame`, frame });
for (const [name, vector] of Object.entries(invalid)) write(`invalid/${name}.json`, vector);
write('identity/challenge.json', {
  description: 'challengeText for nodeId, and the node key’s EIP-191 signature of it',
  nodeId: node.address,
  challenge,
  text: challengeText(challenge, node.address),
  signature: (valid.auth as { signature: string }).signature,
});
write('identity/manifest.json', {
  description: 'canonicalJson(manifest) and the node key’s EIP-191 signature of it',
  manifest,
  canonical: canonicalJson(manifest),
  signature: (valid.manifest as { signature: string }).signature,
});
write('prefix-keys.json', prefixKeyVectors());
write('identity/owner.json', {
  description: 'ownerProofText(nodeId) and the owner wallet’s EIP-191 signature of it',
  nodeId: node.address,
  owner: ownerProof.address,
  text: ownerProofText(node.address),
  signature: ownerProof.signature,
});

/** v0.5: prefixKeys for a few requests, each with the text whose SHA-256 its last key begins. */
function prefixKeyVectors() {
  const tools = [
    {
      type: 'function',
      function: {
        name: 'get_time',
        parameters: { type: 'object', properties: { zone: { type: 'string' } } },
      },
    },
  ];
  const cases = [
    { modelId: 'tiny-chat', tools: null, messages: prefixMessages },
    {
      modelId: 'gpumesh/mini-chat',
      tools,
      messages: [
        { content: 'Keys sort: content before role.', role: 'system' },
        { role: 'user', content: 'What time is it in Oslo? ✓' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'c1',
              type: 'function',
              function: { name: 'get_time', arguments: '{"zone":"Europe/Oslo"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'c1', content: '12:00' },
      ],
    },
    {
      modelId: 'tiny-chat',
      tools: undefined,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'parts' }] }],
    },
  ];
  return {
    description:
      'prefixKeys(modelId, tools, messages): key i = first 16 hex of sha256(modelId + "\\n" + canonicalJson(tools ?? null) + "\\n" + canonicalJson(messages[0..i]))',
    cases: cases.map(({ modelId, tools, messages }) => ({
      modelId,
      tools: tools ?? null,
      messages,
      lastText: `${modelId}\n${canonicalJson(tools ?? null)}\n${canonicalJson(messages)}`,
      keys: prefixKeys(modelId, tools, messages),
    })),
  };
}
