import { describe, expect, test } from 'vitest';
import { seededRandom } from './seeded-random.js';
import type { TextShape, TrafficShape } from './traffic-shape.js';
import { TrafficShapes } from './traffic-shapes.js';

const random = () => seededRandom(new Uint8Array(16).fill(9));

/** A request as the router hands it to a node (v1/routes.ts): a chat with everything a client may send. */
const agentRequest = () => ({
  messages: [
    {
      role: 'system',
      content: 'You are Zephyrine, the concierge of Hotel Marigold. Room 214 belongs to Ms Okonkwo.',
    },
    { role: 'user', content: 'Book me a table at Trattoria Ossobuco for 7pm,\nmy card ends in 4242.' },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        {
          id: 'call_Abc123',
          type: 'function',
          function: {
            name: 'reserve_table',
            arguments: '{"restaurant":"Trattoria Ossobuco","time":"19:00"}',
          },
        },
      ],
    },
    { role: 'tool', tool_call_id: 'call_Abc123', content: '{"confirmation":"OSSO-99812"}' },
    { role: 'user', name: 'kwame_okonkwo', content: [{ type: 'text', text: 'Thanks Zephyrine!' }] },
  ],
  model: 'llama-3-8b',
  temperature: 0.35,
  top_p: 0.9,
  seed: 31337,
  stop: ['\nGuest:', 'Zephyrine:'],
  tools: [
    {
      type: 'function',
      function: {
        name: 'reserve_table',
        description: 'Reserve a table at Trattoria Ossobuco or another restaurant.',
        parameters: {
          type: 'object',
          properties: { restaurant: { type: 'string' }, time: { type: 'string' } },
          required: ['restaurant'],
        },
      },
    },
  ],
  tool_choice: 'auto',
  response_format: {
    type: 'json_schema',
    json_schema: { name: 'booking_receipt', schema: { properties: { ossobuco_code: { type: 'string' } } } },
  },
  metadata: { customer: 'Okonkwo' },
  max_tokens: 4096,
});

const lengths = (text: TextShape) => text.map((l) => l.chars);

describe('TrafficShapes', () => {
  test('default: a client job is recorded as its shape', () => {
    const shapes = new TrafficShapes();
    shapes.note('llama-3-8b', 'chat', agentRequest(), true);
    const shape = shapes.take('llama-3-8b', random()) as TrafficShape;
    expect([shapes.size('llama-3-8b'), shape.kind, shape.stream]).toEqual([1, 'chat', true]);
    // Members in the order sent; `metadata` (an object of text) is left out.
    expect(shape.members).toEqual([
      'messages',
      'model',
      'temperature',
      'top_p',
      'seed',
      'stop',
      'tools',
      'tool_choice',
      'response_format',
      'max_tokens',
    ]);
    expect(shape.values).toEqual({
      temperature: 0.35,
      top_p: 0.9,
      seed: 31337,
      tool_choice: 'auto',
      max_tokens: 4096,
    });
    const messages = shape.messages!;
    expect(messages.map((m) => [m.role, m.members])).toEqual([
      ['system', ['role', 'content']],
      ['user', ['role', 'content']],
      ['assistant', ['role', 'content', 'tool_calls']],
      ['tool', ['role', 'tool_call_id', 'content']],
      ['user', ['role', 'name', 'content']],
    ]);
    const user = messages[1]!.content as { form: 'string'; text: TextShape };
    expect(lengths(user.text)).toEqual(
      ['Book me a table at Trattoria Ossobuco for 7pm,', 'my card ends in 4242.'].map((l) => l.length),
    );
    expect(user.text[0]!.counts).toMatchObject({ digits: 1, commas: 1, upper: 3 });
    expect(messages[2]!.content).toEqual({ form: 'null' });
    expect(messages[2]!.toolCalls).toEqual([
      { args: 2, chars: '{"restaurant":"Trattoria Ossobuco","time":"19:00"}'.length },
    ]);
    expect(messages[4]!.name).toBe(13);
    expect(shape.stop).toMatchObject({ list: true, items: [{ chars: 7 }, { chars: 10 }] });
    expect(shape.tools).toMatchObject([{ name: 13, description: 60, params: 2, required: 1 }]);
    expect(shape.responseFormat).toMatchObject({ type: 'json_schema', properties: 1 });
  });

  test('behavior: no text is kept, only lengths, kinds and keys', () => {
    const shapes = new TrafficShapes();
    shapes.note('llama-3-8b', 'chat', agentRequest(), false);
    shapes.note(
      'llama-3-8b',
      'completion',
      { model: 'llama-3-8b', prompt: 'Dear Ms Okonkwo,\nRoom 214', max_tokens: 9 },
      false,
    );
    // Every string kept (keys are numbers: a digit run like 214 may occur inside one by chance).
    const strings: string[] = [];
    JSON.stringify(
      [shapes.take('llama-3-8b', () => 0), shapes.take('llama-3-8b', () => 0.99)],
      (key, value) => {
        strings.push(key);
        if (typeof value === 'string') strings.push(value);
        return value;
      },
    );
    const kept = strings.join('\n');
    for (const word of [
      'Zephyrine',
      'Marigold',
      'Okonkwo',
      'Ossobuco',
      'reserve',
      'booking',
      '4242',
      'Guest',
      'Dear',
      '214',
      'call_Abc',
    ]) {
      expect([word, kept.includes(word)]).toEqual([word, false]);
    }
  });

  test('behavior: memory is bounded — the last jobs per model, the models noted last', () => {
    const shapes = new TrafficShapes({ perModel: 16, maxModels: 3 });
    for (let i = 0; i < 1_000; i++) {
      shapes.note(
        'a',
        'chat',
        { model: 'a', messages: [{ role: 'user', content: `question ${i}` }], max_tokens: i + 1 },
        false,
      );
    }
    expect(shapes.size('a')).toBe(16);
    // The ring holds the last 16 jobs: max_tokens 985 … 1000.
    const kept = new Set<number>();
    for (let i = 0; i < 200; i++) kept.add(shapes.take('a', Math.random)!.values.max_tokens as number);
    expect(Math.min(...kept)).toBe(985);
    for (const model of ['b', 'c', 'd'])
      shapes.note(model, 'completion', { model, prompt: 'x', max_tokens: 1 }, false);
    expect(['a', 'b', 'c', 'd'].map((m) => shapes.size(m))).toEqual([0, 1, 1, 1]);
  });

  test('behavior: a text seen in several jobs gets a seeded source, the same each time; a text seen once none', () => {
    const shapes = new TrafficShapes({ perModel: 4 });
    const job = (question: string) => ({
      model: 'm',
      messages: [
        { role: 'system', content: 'You are the helpdesk of Acme.' },
        { role: 'user', content: question },
      ],
      max_tokens: 50,
    });
    shapes.note('m', 'chat', job('Where is my parcel?'), false);
    shapes.note('m', 'chat', job('Can I pay by invoice?'), false);
    const shape = shapes.take('m', () => 0)!;
    const [system, user] = shape.messages!.map((m) => (m.content as { text: TextShape }).text[0]!.key);
    expect(shapes.count('m', system!)).toBe(2);
    expect(shapes.count('m', user!)).toBe(1);
    expect(shapes.sharedRandom('m', user!)).toBeUndefined();
    const a = shapes.sharedRandom('m', system!)!;
    const b = shapes.sharedRandom('m', system!)!;
    expect([a(), a(), a()]).toEqual([b(), b(), b()]);
    // Once its jobs left the ring, the text is still known to recur (the longer count).
    for (let i = 0; i < 10; i++) shapes.note('m', 'chat', job(`question ${i}`), false);
    expect(shapes.count('m', user!)).toBe(1);
    expect(shapes.count('m', system!)).toBe(12);
  });

  test('behavior: the longer count forgets the keys seen least recently past its bound', () => {
    const shapes = new TrafficShapes({ perModel: 1, keysPerModel: 8 });
    const note = (text: string) =>
      shapes.note('m', 'completion', { model: 'm', prompt: text, max_tokens: 1 }, false);
    note('first');
    const key = shapes.take('m', () => 0)!.prompt![0]!.key;
    note('first');
    expect(shapes.count('m', key)).toBe(2);
    for (let i = 0; i < 20; i++) note(`other ${i}`);
    expect(shapes.count('m', key)).toBe(0);
  });

  test('behavior: each job stands for one canary while others are left', () => {
    const shapes = new TrafficShapes({ perModel: 8 });
    for (let i = 0; i < 8; i++)
      shapes.note('m', 'completion', { model: 'm', prompt: 'x', max_tokens: i + 1 }, false);
    const r = random();
    const taken = Array.from({ length: 8 }, () => shapes.take('m', r)!.values.max_tokens);
    expect(new Set(taken).size).toBeGreaterThanOrEqual(7);
  });

  test('error: other kinds and malformed requests are ignored, never thrown', () => {
    const shapes = new TrafficShapes();
    shapes.note('m', 'embedding', { model: 'm', input: 'hello' }, false);
    shapes.note('m', 'chat', { model: 'm', messages: 'hello' }, false);
    shapes.note('m', 'completion', { model: 'm', prompt: ['a'] }, false);
    expect(shapes.size('m')).toBe(0);
    const odd = {
      model: 'm',
      messages: [null, 5, { role: {}, content: [null, { type: 'text' }] }],
      stop: [1, 'x'],
    };
    expect(() => shapes.note('m', 'chat', odd as unknown as Record<string, unknown>, false)).not.toThrow();
    expect(shapes.take('m', () => 0)?.messages?.map((m) => m.role)).toEqual(['user', 'user', 'user']);
  });
});
