/**
 * A continued answer is the answer the model would have given (issue 41; NODE_PROTOCOL.md §9
 * "Continuing an answer", v0.4): two real node daemons serve the same tiny GGUF file; the one
 * serving a stream is SIGKILLed once the client has 100 characters, the other continues from the
 * token ids the client got, and the text the client ends with has the sha256 of the uninterrupted
 * answer — for chat, completions and the Responses API at temperature 0, and for chat and
 * completions seeded at temperature 1. A non-streamed answer whose node dies starts over: the same
 * answer too.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { writeTinyModel } from '@gpumesh/node';
import { type SpawnedNodeDaemon, spawnNodeDaemon } from '@gpumesh/node/testing';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { HUB_PATH } from '../coordinator/src/hub/hub-plugin.js';
import { newApiClient } from './support/api-client.js';
import { recordSentJobs, type SentJob } from './support/sent-jobs.js';
import { readSseData } from './support/sse.js';
import {
  nodeIdOf,
  servedModel,
  startCoordinator,
  type TestCoordinator,
} from './support/tiny-node-network.js';

/** Long enough that the serving node is still producing when it is killed (~1,500 tokens/s here). */
const MAX_TOKENS = 1_000;
/** The tiny model's end-of-sequence token, banned: every answer runs to max_tokens. */
const NO_EOS = { '2': -100 };

/** The client has this much text when its node is killed (the cut came at 88 characters). */
const KILL_AFTER_CHARS = 100;

type Endpoint = 'chat' | 'completions' | 'responses';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** The text an event of `endpoint`'s stream adds (chat delta, completion text, output_text.delta). */
function textOf(endpoint: Endpoint, data: string): string {
  if (data === '[DONE]') return '';
  const event = JSON.parse(data) as {
    type?: string;
    delta?: string;
    choices?: { delta?: { content?: string }; text?: string }[];
  };
  if (endpoint === 'responses') return event.type === 'response.output_text.delta' ? (event.delta ?? '') : '';
  const choice = event.choices?.[0];
  return (endpoint === 'chat' ? choice?.delta?.content : choice?.text) ?? '';
}

describe('a continued answer is the uninterrupted one, byte for byte', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'gm-exact-continuation-'));
  let coordinator: TestCoordinator;
  let app: FastifyInstance;
  let base: string;
  let key: string;
  let model: string;
  const daemons = new Map<string, SpawnedNodeDaemon>();
  const spawned: SpawnedNodeDaemon[] = [];
  const homes = new Map<string, string>();
  let sent: SentJob[] = [];

  function start(nodeId: string): void {
    const daemon = spawnNodeDaemon({
      coordinator: `${base.replace('http', 'ws')}${HUB_PATH}`,
      dir: homes.get(nodeId)!,
    });
    daemons.set(nodeId, daemon);
    spawned.push(daemon);
  }

  /** Both nodes online (restarting one that was killed), nothing sent yet. */
  async function bothOnline(): Promise<void> {
    for (const [nodeId, daemon] of daemons)
      if (daemon.process.exitCode !== null || daemon.process.signalCode !== null) start(nodeId);
    await vi.waitFor(
      () => {
        const pick = app.hub.index.pick({ modelId: model, limit: 5 });
        if (!pick.ok || pick.candidates.length < 2) throw new Error('the nodes are not online yet');
      },
      { timeout: 60_000, interval: 50 },
    );
    sent.length = 0;
  }

  /** The body of a request to `endpoint` for a long answer under `sampling`. */
  function body(endpoint: Endpoint, input: string, sampling: Record<string, unknown>, stream: boolean) {
    if (endpoint === 'responses')
      return { model, input, max_output_tokens: MAX_TOKENS, stream, store: false, ...sampling };
    const common = { model, max_tokens: MAX_TOKENS, logit_bias: NO_EOS, stream, ...sampling };
    return endpoint === 'chat'
      ? { ...common, messages: [{ role: 'user', content: input }] }
      : { ...common, prompt: input };
  }

  function ask(endpoint: Endpoint, request: Record<string, unknown>) {
    const route = endpoint === 'chat' ? 'chat/completions' : endpoint;
    return fetch(`${base}/v1/${route}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(request),
    });
  }

  /** A streamed answer read to its end, its node killed once the client has KILL_AFTER_CHARS of text if `kill`. */
  async function streamedText(endpoint: Endpoint, request: Record<string, unknown>, kill: boolean) {
    const res = await ask(endpoint, request);
    expect(res.status).toBe(200);
    const serving = res.headers.get('x-gpumesh-node')!.toLowerCase();
    let text = '';
    const data = await readSseData(res, (event) => {
      const piece = textOf(endpoint, event);
      // Killed well into the answer: a cut after one token would re-tokenize to the same ids.
      if (kill && text.length < KILL_AFTER_CHARS && text.length + piece.length >= KILL_AFTER_CHARS)
        daemons.get(serving)!.process.kill('SIGKILL');
      text += piece;
    });
    const errors = data.filter((event) => event !== '[DONE]' && 'error' in (JSON.parse(event) as object));
    expect(errors).toEqual([]);
    return text;
  }

  beforeAll(async () => {
    const tiny = path.join(dir, 'tiny.gguf');
    await writeTinyModel({ path: tiny });
    for (const name of ['one', 'two']) {
      const home = path.join(dir, name);
      mkdirSync(path.join(home, 'models'), { recursive: true });
      copyFileSync(tiny, path.join(home, 'models', 'tiny.gguf'));
      homes.set((await nodeIdOf(home)).toLowerCase(), home);
    }
    coordinator = await startCoordinator('exact-continuation');
    ({ app, base } = coordinator);
    ({ key } = await newApiClient(app, {
      keyName: 'x',
      creditNano: 10_000_000_000n,
      creditRef: 'exact-seed',
    }));
    sent = recordSentJobs(app);
    for (const nodeId of homes.keys()) start(nodeId);
    await vi.waitFor(
      () => {
        model = servedModel(app, 'chat') ?? '';
        if (!model) throw new Error('no chat model yet');
      },
      { timeout: 60_000, interval: 50 },
    );
  }, 120_000);

  afterAll(async () => {
    for (const daemon of spawned) await daemon.stop();
    await coordinator?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const cases: [Endpoint, string, Record<string, unknown>][] = [
    ['chat', 'temperature 0', { temperature: 0 }],
    ['completions', 'temperature 0', { temperature: 0 }],
    ['responses', 'temperature 0', { temperature: 0 }],
    [
      'chat',
      'temperature 1, seed 7, penalties',
      { temperature: 1, seed: 7, presence_penalty: 0.8, frequency_penalty: 0.4 },
    ],
    ['completions', 'temperature 1, seed 7', { temperature: 1, seed: 7 }],
  ];

  test.each(cases)(
    'behavior: %s at %s, streamed: the node killed mid-stream, the continued text has the uninterrupted sha256',
    async (endpoint, _label, sampling) => {
      const input = `Tell me a long story about ${endpoint}.`;
      const request = body(endpoint, input, sampling, true);
      await bothOnline();
      const whole = await streamedText(endpoint, request, false);
      expect(whole.length).toBeGreaterThan(0);
      await bothOnline();
      const continued = await streamedText(endpoint, request, true);
      // Continued on the other node, from the ids of exactly the text the client had.
      expect(sent).toHaveLength(2);
      const [first, second] = sent as [SentJob, SentJob];
      expect(second.nodeId).not.toBe(first.nodeId);
      expect(second.continueFrom).toBe(first.text);
      expect(second.continueFromIds).toEqual(first.ids);
      expect(first.ids.length).toBeGreaterThan(0);
      expect(second.text.length).toBeGreaterThan(0);
      console.log(
        `${endpoint} (${_label}): killed after ${first.ids.length} tokens; ${whole.length} characters, sha256 ${sha256(whole).slice(0, 12)}… either way`,
      );
      expect(sha256(continued)).toBe(sha256(whole));
    },
    120_000,
  );

  test('behavior: not streamed, a node dying mid-job starts the answer over: the same text', async () => {
    const request = body('chat', 'A story, all at once.', { temperature: 1, seed: 3 }, false);
    await bothOnline();
    const read = async (res: Response) =>
      ((await res.json()) as { choices: { message: { content: string } }[] }).choices[0]!.message.content;
    const whole = await read(await ask('chat', request));
    await bothOnline();
    const asked = ask('chat', request);
    await vi.waitFor(
      () => {
        if (sent.length === 0) throw new Error('no job sent yet');
      },
      { timeout: 10_000, interval: 2 },
    );
    daemons.get(sent[0]!.nodeId)!.process.kill('SIGKILL');
    const res = await asked;
    expect(res.status).toBe(200);
    expect(sent).toHaveLength(2);
    expect(sha256(await read(res))).toBe(sha256(whole));
  }, 120_000);
});
