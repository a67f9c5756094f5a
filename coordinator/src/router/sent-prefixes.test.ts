import { prefixKeys } from '@gpumesh/protocol';
import { describe, expect, test } from 'vitest';
import { PickIndex } from './pick-index.js';
import { Router } from './router.js';
import { MAX_PREFIX_KEYS_PER_NODE, SentPrefixes } from './sent-prefixes.js';

const system = { role: 'system', content: 'You are terse.' };
const turn1 = [system, { role: 'user', content: 'hi' }];
const turn2 = [...turn1, { role: 'assistant', content: 'hello' }, { role: 'user', content: 'again' }];
const keys1 = prefixKeys('m', null, turn1);
const keys2 = prefixKeys('m', null, turn2);

describe('SentPrefixes', () => {
  test('default: the bound is the prompt billed for the earlier job whose messages begin this one', () => {
    const sent = new SentPrefixes({ lifetimeMs: 60_000 });
    sent.record('a', keys1, 40, 1_000, 'u');
    expect(sent.bound('a', keys2, 2_000, 'u')).toBe(40);
    expect(sent.held('a', keys2, 2_000)).toBe(1);
    // Turn 1's whole list begins turn 2: the conversation continues on a.
    expect(sent.continues('a', keys2, 2_000)).toBe(true);
  });

  test('behavior: another node, another model, other tools or another history have no bound', () => {
    const sent = new SentPrefixes({ lifetimeMs: 60_000 });
    sent.record('a', keys1, 40, 1_000, 'u');
    expect(sent.bound('b', keys2, 2_000, 'u')).toBe(0);
    expect(sent.bound('a', prefixKeys('other', null, turn2), 2_000, 'u')).toBe(0);
    expect(sent.bound('a', prefixKeys('m', [{ type: 'function' }], turn2), 2_000, 'u')).toBe(0);
    const other = [{ role: 'system', content: 'You are verbose.' }, ...turn2.slice(1)];
    expect(sent.bound('a', prefixKeys('m', null, other), 2_000, 'u')).toBe(0);
    expect(sent.held('a', prefixKeys('m', null, other), 2_000)).toBe(-1);
  });

  test("security: another account's identical prompt is not billed cached — its bill would tell that someone sent it", () => {
    const sent = new SentPrefixes({ lifetimeMs: 60_000 });
    sent.record('a', keys1, 40, 1_000, 'alice');
    // Mallory sends Alice's exact history to the same node: full price, cached_tokens 0.
    expect(sent.bound('a', keys2, 2_000, 'mallory')).toBe(0);
    expect(sent.bound('a', keys1, 2_000, 'mallory')).toBe(0);
    expect(sent.bound('a', keys2, 2_000, 'alice')).toBe(40);
    // Routing still reads the node's cache, whoever filled it.
    expect(sent.held('a', keys2, 2_000)).toBe(1);
    // Once Mallory has sent the prefix herself, her next turn is bounded by it; each account's
    // time counts on its own: Alice's lapses after the lifetime even while Mallory keeps sending.
    sent.record('a', keys1, 40, 30_000, 'mallory');
    expect(sent.bound('a', keys2, 31_000, 'mallory')).toBe(40);
    expect(sent.bound('a', keys2, 61_001, 'alice')).toBe(0);
    expect(sent.bound('a', keys2, 61_001, 'mallory')).toBe(40);
  });

  test('behavior: a new conversation sharing only the system prompt is bounded by the fewest tokens of a job that held it', () => {
    const sent = new SentPrefixes({ lifetimeMs: 60_000 });
    sent.record('a', keys2, 70, 1_000, 'u');
    sent.record('a', keys1, 40, 2_000, 'u');
    sent.record(
      'a',
      prefixKeys('m', null, [system, { role: 'user', content: 'a longer first question' }]),
      55,
      3_000,
      'u',
    );
    // The system message alone was never a job's whole list: its tokens are at most the fewest
    // billed for a job that held it (turn 1's 40), not the last (55) nor the longest (70).
    const edited = [system, { role: 'user', content: 'hi!' }];
    expect(sent.held('a', prefixKeys('m', null, edited), 4_000)).toBe(0);
    // Only the shared system prompt: a new conversation, not this one's history.
    expect(sent.continues('a', prefixKeys('m', null, edited), 4_000)).toBe(false);
    expect(sent.bound('a', prefixKeys('m', null, edited), 4_000, 'u')).toBe(40);
    // A job whose whole list is that prefix sets its own count, exact, after which no other lowers it.
    sent.record('a', prefixKeys('m', null, [system]), 12, 5_000, 'u');
    sent.record('a', keys1, 40, 6_000, 'u');
    expect(sent.bound('a', prefixKeys('m', null, edited), 7_000, 'u')).toBe(12);
  });

  test('behavior: the longest earlier job bounds; past the lifetime nothing does', () => {
    const sent = new SentPrefixes({ lifetimeMs: 60_000 });
    sent.record('a', keys1, 40, 1_000, 'u');
    sent.record('a', keys2, 70, 2_000, 'u');
    const turn3 = [...turn2, { role: 'assistant', content: 'yes' }, { role: 'user', content: 'bye' }];
    expect(sent.bound('a', prefixKeys('m', null, turn3), 3_000, 'u')).toBe(70);
    expect(sent.bound('a', prefixKeys('m', null, turn3), 62_001, 'u')).toBe(0);
    expect(sent.held('a', prefixKeys('m', null, turn3), 62_001)).toBe(-1);
  });

  test('behavior: a prefix sent again keeps its bound and its time moves on', () => {
    const sent = new SentPrefixes({ lifetimeMs: 60_000 });
    sent.record('a', keys1, 40, 1_000, 'u');
    sent.record('a', keys2, 70, 50_000, 'u');
    // keys1's full list was sent again inside turn 2 at 50 s: still held, still bounding at 40.
    expect(sent.bound('a', [...keys1, 'ffffffffffffffff'], 100_000, 'u')).toBe(40);
  });

  test('behavior: a node keeps at most MAX_PREFIX_KEYS_PER_NODE keys, the oldest dropped', () => {
    const sent = new SentPrefixes({ lifetimeMs: 60_000 });
    sent.record('a', keys1, 40, 1_000, 'u');
    for (let i = 0; i < MAX_PREFIX_KEYS_PER_NODE; i++) sent.record('a', [`k${i}`], 1, 1_001, 'u');
    expect(sent.bound('a', keys1, 1_002, 'u')).toBe(0);
    expect(sent.bound('a', ['k5'], 1_002, 'u')).toBe(1);
  });
});

describe('Router: what was sent a node lasts as long as its session', () => {
  const node = (nodeId: string) => ({
    nodeId,
    owner: null,
    tierRank: 0,
    scopes: new Set(['infer.chat']),
    state: 'online',
    models: [
      {
        modelId: 'm',
        family: 'chat',
        contextLength: 4096,
        maxConcurrency: 1,
        priceIn: 1n,
        priceOut: 1n,
        currency: 'USD' as const,
      },
    ],
  });

  test('behavior: a node leaving the index, or a new session replacing it, is forgotten; the others are not', () => {
    const index = new PickIndex({ nativeToUsdNano: (wei) => wei });
    const router = new Router({
      index,
      local: { reachable: () => true, dispatch: () => ({ jobId: '', cancel() {} }) },
    });
    index.upsert(node('a'));
    index.upsert(node('b'));
    router.sentPrefixes.record('a', keys1, 40, 1_000, 'u');
    router.sentPrefixes.record('b', keys1, 40, 1_000, 'u');
    // Its session closed (hub unregister, or its replica dropped it): the next session holds none of it.
    index.remove('a');
    expect(router.sentPrefixes.bound('a', keys2, 2_000, 'u')).toBe(0);
    expect(router.sentPrefixes.held('a', keys2, 2_000)).toBe(-1);
    expect(router.sentPrefixes.bound('b', keys2, 2_000, 'u')).toBe(40);
    // A new session registered while the old one was still open re-indexes the node: forgotten too.
    index.upsert(node('b'));
    expect(router.sentPrefixes.bound('b', keys2, 2_000, 'u')).toBe(0);
  });
});
