/** Output under a grammar: response_format JSON schemas and forced tool calls (json-grammars.ts, tool-calls.ts). */
import { describe, expect, test } from 'vitest';
import type { JsonObject } from '../runtime.js';
import { NO_EOS, useTinyRuntime } from './tiny-runtime-fixture.js';

const tiny = useTinyRuntime();

/** A request forcing a call of `f`, whose one parameter `ok` is a boolean. */
const FORCED_OK = {
  messages: [{ role: 'user', content: 'x' }],
  tools: [
    {
      type: 'function',
      function: {
        name: 'f',
        parameters: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
      },
    },
  ],
  tool_choice: 'required',
};

describe('JSON output', () => {
  test('behavior: a JSON-schema integer comes out as a plain integer, never with an exponent', async () => {
    const schema = {
      type: 'object',
      properties: { n: { type: 'integer' }, x: { type: 'number' } },
      required: ['n', 'x'],
      additionalProperties: false,
    };
    let exponents = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const response = await tiny.whole('chat', {
        messages: [{ role: 'user', content: 'Numbers.' }],
        max_tokens: 64,
        seed,
        temperature: 1.5,
        response_format: { type: 'json_schema', json_schema: { name: 'n', schema } },
      });
      const content = (response.choices as { message: { content: string } }[])[0]!.message.content;
      const n = /"n"\s*:\s*([^,}\s]+)/.exec(content)?.[1] ?? '';
      expect(n).toMatch(/^-?(0|[1-9][0-9]*)$/);
      expect(Number.isSafeInteger(Number(n)) || n.replace('-', '').length >= 16).toBe(true);
      if (/[eE]/.test(/"x"\s*:\s*([^,}\s]+)/.exec(content)?.[1] ?? '')) exponents++;
    }
    // The grammar is otherwise node-llama-cpp's: a number may still take an exponent.
    console.log(`json integers: 40 plain; numbers with an exponent: ${exponents}`);
  });

  test('behavior: response_format json_schema constrains the output to the schema (llama.cpp grammar)', async () => {
    const schema = {
      type: 'object',
      properties: { ok: { type: 'boolean' }, answer: { enum: ['yes', 'no'] } },
      required: ['ok', 'answer'],
      additionalProperties: false,
    };
    for (const seed of [1, 2, 3]) {
      const response = await tiny.whole('chat', {
        messages: [{ role: 'user', content: 'Answer in JSON.' }],
        max_tokens: 64,
        seed,
        response_format: { type: 'json_schema', json_schema: { name: 'a', schema } },
      });
      const content = (response.choices as { message: { content: string } }[])[0]!.message.content;
      const parsed = JSON.parse(content) as { ok: unknown; answer: unknown };
      expect(typeof parsed.ok).toBe('boolean');
      expect(['yes', 'no']).toContain(parsed.answer);
      expect(Object.keys(parsed).sort()).toEqual(['answer', 'ok']);
    }
    // Without it, the random-weights model answers anything but JSON.
    const plain = await tiny.whole('chat', {
      messages: [{ role: 'user', content: 'Answer in JSON.' }],
      max_tokens: 16,
      seed: 1,
      logit_bias: NO_EOS,
    });
    const text = (plain.choices as { message: { content: string } }[])[0]!.message.content;
    expect(() => JSON.parse(text)).toThrow();
  });

  test('behavior: a forced tool call comes back as tool_calls whose arguments fit the function (grammar)', async () => {
    const tools = [
      {
        type: 'function' as const,
        function: {
          name: 'get_weather',
          description: 'The weather in a city',
          parameters: {
            $schema: 'http://json-schema.org/draft-07/schema#',
            type: 'object',
            properties: { city: { type: 'string', enum: ['Paris', 'Rome'] }, celsius: { type: 'boolean' } },
            required: ['city', 'celsius'],
            additionalProperties: false,
          },
        },
      },
      {
        type: 'function' as const,
        function: { name: 'noop', parameters: { type: 'object', properties: {} } },
      },
    ];
    for (const tool_choice of [
      'required',
      { type: 'function', function: { name: 'get_weather' } },
    ] as const) {
      const response = await tiny.whole('chat', {
        messages: [{ role: 'user', content: 'Weather in Paris?' }],
        // The generated model's tokens are bytes: a call's JSON is ~70 of them, with whitespace more.
        max_tokens: 256,
        seed: 3,
        tools,
        tool_choice,
      });
      const choice = (response.choices as { message: Record<string, unknown>; finish_reason: string }[])[0]!;
      expect(choice.finish_reason).toBe('tool_calls');
      expect(choice.message.content).toBeNull();
      const [call] = choice.message.tool_calls as {
        id: string;
        type: string;
        function: { name: string; arguments: string };
      }[];
      expect(call!.id).toMatch(/^call_/);
      expect(['get_weather', 'noop']).toContain(call!.function.name);
      const args = JSON.parse(call!.function.arguments) as Record<string, unknown>;
      if (typeof tool_choice === 'object' || call!.function.name === 'get_weather') {
        expect(call!.function.name).toBe('get_weather');
        expect(['Paris', 'Rome']).toContain(args.city);
        expect(typeof args.celsius).toBe('boolean');
      }
    }
    // A tool loop's history (the call, then its result) renders and is answered.
    const next = await tiny.whole('chat', {
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'call_1',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Paris","celsius":true}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '21 and sunny' },
      ],
      max_tokens: 8,
      tools,
    });
    expect((next.choices as { finish_reason: string }[])[0]!.finish_reason).not.toBe('tool_calls');
  });

  test('behavior: a streamed forced tool call arrives as OpenAI streams it: name, arguments, finish', async () => {
    const chunks = await tiny.chunks('chat', { ...FORCED_OK, max_tokens: 64 });
    const deltas = chunks.map(
      (c) => (c.choices as { delta: Record<string, unknown>; finish_reason: string | null }[])[0]!,
    );
    expect(deltas[0]!.delta).toMatchObject({
      role: 'assistant',
      tool_calls: [{ index: 0, type: 'function', function: { name: 'f', arguments: '' } }],
    });
    // The arguments come as deltas while they are generated (several for a longer call), adding
    // up to the JSON of the function's parameters.
    const args = deltas
      .slice(1)
      .map(
        (d) =>
          (d.delta.tool_calls as { function: { arguments: string } }[] | undefined)?.[0]?.function
            .arguments ?? '',
      )
      .join('');
    expect(typeof (JSON.parse(args) as { ok: unknown }).ok).toBe('boolean');
    expect(deltas.at(-1)!.finish_reason).toBe('tool_calls');
  });

  test("behavior: a request's stop strings do not cut a forced tool call (its grammar ends it)", async () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const response = (await tiny.whole('chat', {
        ...FORCED_OK,
        max_tokens: 128,
        seed,
        stop: ['\n', '"', ':'],
      })) as unknown as {
        choices: { finish_reason: string; message: { tool_calls: { function: { arguments: string } }[] } }[];
      };
      expect(response.choices[0]!.finish_reason).toBe('tool_calls');
      expect(typeof JSON.parse(response.choices[0]!.message.tool_calls[0]!.function.arguments).ok).toBe(
        'boolean',
      );
    }
  });

  test('behavior: a forced tool call cut by max_tokens is answered as OpenAI does: partial arguments, finish_reason length', async () => {
    const request = {
      messages: [{ role: 'user', content: 'x' }],
      tools: [
        {
          type: 'function',
          function: {
            name: 'write_note',
            parameters: {
              type: 'object',
              properties: { text: { type: 'string', minLength: 200 } },
              required: ['text'],
            },
          },
        },
      ],
      tool_choice: { type: 'function', function: { name: 'write_note' } },
      // Past the call's head (`{"name": "write_note", "arguments": {"text": "`), short of 200 characters.
      max_tokens: 70,
    };
    const whole = (await tiny.whole('chat', request)) as unknown as {
      choices: {
        finish_reason: string;
        message: { tool_calls: { function: { name: string; arguments: string } }[] };
      }[];
    };
    expect(whole.choices[0]!.finish_reason).toBe('length');
    const [call] = whole.choices[0]!.message.tool_calls;
    expect(call!.function.name).toBe('write_note');
    expect(() => JSON.parse(call!.function.arguments)).toThrow();
    const chunks = await tiny.chunks('chat', request);
    const deltas = chunks.map(
      (c) => (c.choices as { delta: JsonObject; finish_reason: string | null }[])[0]!,
    );
    expect(deltas.at(-1)!.finish_reason).toBe('length');
    expect(deltas.filter((d) => d.delta.tool_calls).length).toBeGreaterThan(2);
  });
});
