import { Value } from '@sinclair/typebox/value';
import { describe, expect, test } from 'vitest';
import { ChatCompletionBody, CompletionBody } from '../../v1/schemas.js';
import { makeCanary } from './make-canary.js';
import { seededRandom } from './seeded-random.js';
import { lineKindOf } from './text-shape.js';
import { TrafficShapes } from './traffic-shapes.js';

const random = (n = 1) => seededRandom(new Uint8Array(16).fill(n));
type Message = { role: string; content: unknown; tool_calls?: { id: string; function: { name: string } }[] };

const QUESTION = [
  '## Setup',
  'I run this on **Ubuntu 22.04** and it fails:',
  '',
  '```python',
  'def load(path):',
  '    return json.load(open(path))',
  '```',
  '',
  '- it worked yesterday, honestly',
  '- the file is 2 MB',
  'Any idea why?',
].join('\n');

/** A client's chat as its node gets it: the members in the client's order, max_tokens set by the router. */
const clientChat = () => ({
  model: 'qwen-7b',
  messages: [
    { role: 'system', content: 'You are a careful assistant for developers.' },
    { role: 'user', content: QUESTION },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'search_docs', arguments: '{"q":"json load"}' } },
      ],
    },
    { role: 'tool', tool_call_id: 'call_1', content: 'No results.' },
    { role: 'user', content: [{ type: 'text', text: 'Try again please.' }] },
  ],
  temperature: 0.2,
  top_p: 0.95,
  stop: ['\nUser:'],
  tools: [
    {
      type: 'function',
      function: {
        name: 'search_docs',
        description: 'Search the docs.',
        parameters: {
          type: 'object',
          properties: { q: { type: 'string' }, page: { type: 'integer' } },
          required: ['q'],
        },
      },
    },
  ],
  tool_choice: 'auto',
  response_format: { type: 'json_object' },
  seed: 7,
  max_tokens: 512,
});

const texts = (content: unknown): string[] =>
  typeof content === 'string'
    ? [content]
    : Array.isArray(content)
      ? content.map((p) => (p as { text: string }).text)
      : [];

describe('makeCanary', () => {
  test('default: the member set and order, values, roles and lengths of a recorded job', () => {
    const shapes = new TrafficShapes();
    const client = clientChat();
    shapes.note('qwen-7b', 'chat', client, true);
    const canary = makeCanary(shapes, 'qwen-7b', random());
    const request = canary.request;
    expect([canary.kind, canary.stream, Object.keys(request)]).toEqual(['chat', true, Object.keys(client)]);
    for (const member of ['model', 'temperature', 'top_p', 'tool_choice', 'seed', 'max_tokens'] as const) {
      expect([member, request[member]]).toEqual([member, client[member]]);
    }
    const messages = request.messages as Message[];
    expect(messages.map((m) => Object.keys(m))).toEqual(client.messages.map((m) => Object.keys(m)));
    expect(messages.map((m) => texts(m.content).map((t) => t.length))).toEqual(
      client.messages.map((m) => texts(m.content).map((t) => t.length)),
    );
    expect(messages[2]!.content).toBeNull();
    // The tool message answers the call before it; the call names one of the canary's tools.
    const call = messages[2]!.tool_calls![0]!;
    expect((messages[3] as unknown as { tool_call_id: string }).tool_call_id).toBe(call.id);
    const tools = request.tools as {
      function: { name: string; parameters: { properties: object; required: string[] } };
    }[];
    expect(
      tools.map((t) => [
        Object.keys(t.function.parameters.properties).length,
        t.function.parameters.required.length,
      ]),
    ).toEqual([[2, 1]]);
    expect(call.function.name).toBe(tools[0]!.function.name);
    expect((request.stop as string[]).map((s) => s.length)).toEqual([6]);
    expect(request.response_format).toEqual({ type: 'json_object' });
    expect(Value.Check(ChatCompletionBody, request)).toBe(true);
    // Generated words, not the client's.
    expect(JSON.stringify(request)).not.toMatch(/Ubuntu|json\.load|search_docs|careful assistant|Try again/);
  });

  test('behavior: line by line, each line as long as the traffic line and of its kind', () => {
    const shapes = new TrafficShapes();
    shapes.note(
      'm',
      'chat',
      { model: 'm', messages: [{ role: 'user', content: QUESTION }], max_tokens: 9 },
      false,
    );
    const canary = makeCanary(shapes, 'm', random(2));
    const lines = texts((canary.request.messages as Message[])[0]!.content)[0]!.split('\n');
    const traffic = QUESTION.split('\n');
    expect(lines.map((l) => l.length)).toEqual(traffic.map((l) => l.length));
    expect(lines.map(lineKindOf)).toEqual(traffic.map(lineKindOf));
    expect(lines[3]).toBe('```python');
  });

  test('behavior: a text several jobs share is the same in every canary; a text seen once is fresh each time', () => {
    const shapes = new TrafficShapes();
    for (let i = 0; i < 20; i++) {
      const messages = [
        { role: 'system', content: 'You are the support bot of a bike shop. Be brief.' },
        { role: 'user', content: `My order ${1000 + i} has not arrived yet, what can I do?` },
      ];
      shapes.note('m', 'chat', { model: 'm', messages, max_tokens: 100 }, false);
    }
    const r = random(3);
    const canaries = Array.from(
      { length: 20 },
      () => makeCanary(shapes, 'm', r).request.messages as Message[],
    );
    expect(new Set(canaries.map((m) => m[0]!.content)).size).toBe(1);
    expect(new Set(canaries.map((m) => m[1]!.content)).size).toBe(20);
    expect((canaries[0]![0]!.content as string).length).toBe(
      'You are the support bot of a bike shop. Be brief.'.length,
    );
  });

  test('behavior: completion jobs keep their prompt shape and stop sequences', () => {
    const shapes = new TrafficShapes();
    const prompt = 'Q: What is the capital of France?\nA: Paris\n\nQ: Who wrote Hamlet?\nA:';
    shapes.note('m', 'completion', { model: 'm', prompt, max_tokens: 16, temperature: 0, stop: '\n' }, false);
    const { kind, stream, request } = makeCanary(shapes, 'm', random(4));
    expect([kind, stream, Object.keys(request), request.stop, request.temperature]).toEqual([
      'completion',
      false,
      ['model', 'prompt', 'max_tokens', 'temperature', 'stop'],
      '\n',
      0,
    ]);
    const lines = (request.prompt as string).split('\n');
    expect(lines.map((l) => l.length)).toEqual(prompt.split('\n').map((l) => l.length));
    // Labels are structure: "Q:" and "A:" stay.
    expect(lines.map((l) => l.slice(0, 2))).toEqual(['Q:', 'A:', '', 'Q:', 'A:']);
    expect(Value.Check(CompletionBody, request)).toBe(true);
  });

  test('behavior: no traffic recorded — the default mix, mostly streamed chat', () => {
    const shapes = new TrafficShapes();
    const r = random(5);
    const canaries = Array.from({ length: 500 }, () =>
      makeCanary(shapes, 'm', r, { defaultMaxTokens: 2048 }),
    );
    const chats = canaries.filter((c) => c.kind === 'chat');
    const share = (n: number, of: number) => n / of;
    expect(share(chats.length, 500)).toBeGreaterThan(0.78);
    expect(share(chats.length, 500)).toBeLessThan(0.92);
    expect(share(chats.filter((c) => c.stream).length, chats.length)).toBeGreaterThan(0.55);
    expect(share(chats.filter((c) => c.stream).length, chats.length)).toBeLessThan(0.75);
    const systems = chats.filter((c) => (c.request.messages as Message[])[0]!.role === 'system').length;
    expect(share(systems, chats.length)).toBeGreaterThan(0.4);
    expect(share(systems, chats.length)).toBeLessThan(0.6);
    const users = chats.map((c) => (c.request.messages as Message[]).filter((m) => m.role === 'user').length);
    expect([Math.min(...users), Math.max(...users)]).toEqual([1, 5]);
    for (const c of canaries) {
      expect(typeof c.request.max_tokens).toBe('number');
      expect(Value.Check(c.kind === 'chat' ? ChatCompletionBody : CompletionBody, c.request)).toBe(true);
    }
    // A client naming no max_tokens gets the router's: the canaries that stand for one carry it.
    expect(canaries.some((c) => c.request.max_tokens === 2048)).toBe(true);
  });

  test('behavior: jobs with more text than maxTextChars are passed over for the default mix', () => {
    const shapes = new TrafficShapes();
    shapes.note('m', 'completion', { model: 'm', prompt: 'x'.repeat(5_000), max_tokens: 3 }, false);
    const canary = makeCanary(shapes, 'm', random(6), { maxTextChars: 1_000 });
    expect(canary.request.max_tokens).not.toBe(3);
  });
});
