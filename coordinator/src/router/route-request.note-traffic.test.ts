/**
 * The router tells the app's TrafficShapes each client chat and completion job once, as the node
 * gets it (trust/: canaries are made like traffic); embeddings and jobs no node took are not told.
 * A real app on SQLite with the protocol's reference node.
 */
import type { AddressInfo } from 'node:net';
import {
  REFERENCE_CHAT_MODEL,
  REFERENCE_EMBEDDING_MODEL,
  startReferenceNode,
} from '@gpumesh/protocol/conformance';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { HUB_PATH } from '../hub/hub-plugin.js';
import { createTestApp, fundedApiKey, type TestApp, testBackends, until } from '../testing/index.js';
import { TrafficShapes } from '../trust/canaries/traffic-shapes.js';

describe('noteTraffic', () => {
  const note = vi.spyOn(TrafficShapes.prototype, 'note');
  let t: TestApp;
  let node: ReturnType<typeof startReferenceNode> | undefined;
  let key: string;

  beforeAll(async () => {
    const sqlite = testBackends().find((b) => b.name === 'sqlite')!;
    t = await createTestApp(sqlite, { label: 'note-traffic', overrides: { router: { maxTokensCap: 8 } } });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    key = await fundedApiKey(t.app, t.db, 'note-traffic', 1_000_000_000_000n);
    const port = (t.app.server.address() as AddressInfo).port;
    node = startReferenceNode({ url: `ws://127.0.0.1:${port}${HUB_PATH}`, tokenDelayMs: 0, capacity: 4 });
    await until(
      () =>
        t.app.hub.index.pick({ modelId: REFERENCE_CHAT_MODEL }).ok &&
        t.app.hub.index.pick({ modelId: REFERENCE_EMBEDDING_MODEL }).ok,
    );
  }, 60_000);
  afterAll(async () => {
    note.mockRestore();
    await node?.stop();
    await t?.close();
  });

  const post = (url: string, payload: Record<string, unknown>) =>
    t.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${key}` }, payload });

  test('default: a chat and a completion are told once each, as the node gets them', async () => {
    note.mockClear();
    const chat = await post('/v1/chat/completions', {
      messages: [{ role: 'user', content: 'hello' }],
      model: REFERENCE_CHAT_MODEL,
      stream: true,
      user: 'someone',
      temperature: 0.5,
    });
    expect(chat.statusCode).toBe(200);
    const completion = await post('/v1/completions', {
      model: REFERENCE_CHAT_MODEL,
      prompt: ['Once'],
      max_tokens: 3,
    });
    expect(completion.statusCode).toBe(200);
    expect(note.mock.calls).toEqual([
      [
        REFERENCE_CHAT_MODEL,
        'chat',
        {
          messages: [{ role: 'user', content: 'hello' }],
          model: REFERENCE_CHAT_MODEL,
          temperature: 0.5,
          max_tokens: 8,
        },
        true,
        { shareable: true },
      ],
      [
        REFERENCE_CHAT_MODEL,
        'completion',
        { model: REFERENCE_CHAT_MODEL, prompt: 'Once', max_tokens: 3 },
        false,
        { shareable: true },
      ],
    ]);
  });

  test("behavior: a request that denies data collection is told as not shareable (its words aren't learnt)", async () => {
    note.mockClear();
    const chat = await post('/v1/chat/completions', {
      messages: [{ role: 'user', content: 'private' }],
      model: REFERENCE_CHAT_MODEL,
      provider: { data_collection: 'deny' },
    });
    expect(chat.statusCode).toBe(200);
    expect(note.mock.calls.map((call) => call.at(-1))).toEqual([{ shareable: false }]);
  });

  test('behavior: embeddings and requests no node took are not told', async () => {
    note.mockClear();
    expect((await post('/v1/embeddings', { model: REFERENCE_EMBEDDING_MODEL, input: 'hi' })).statusCode).toBe(
      200,
    );
    expect(
      (
        await post('/v1/chat/completions', {
          model: 'no-such-model',
          messages: [{ role: 'user', content: 'x' }],
        })
      ).statusCode,
    ).toBe(404);
    expect(note).not.toHaveBeenCalled();
  });
});
