/**
 * The hidden edges a client meets (issue 41, point 4), through the official `openai` SDK against
 * the real daemon on the random-weight tiny model: a stop sequence that spans two streamed pieces,
 * `n` > 1 with streaming and tools, `logprobs` with a forced tool call, `max_tokens` beside
 * `max_completion_tokens`, and `parallel_tool_calls: false`. (A request whose fitting nodes are
 * all busy: test/router-e2e.test.ts.) The decisions: coordinator/README.md "The /v1 parameters".
 * Registered by clients.test.ts, on its network.
 */
import OpenAI from 'openai';
import { describe, expect, test } from 'vitest';
import type { ClientsNetwork } from '../support/clients-network.js';

/** The tiny model's end-of-sequence token, banned so an answer runs to its limit. */
const NO_EOS = { '2': -100 };

const city = {
  type: 'object',
  properties: { city: { type: 'string', enum: ['Paris', 'Rome'] } },
  required: ['city'],
  additionalProperties: false,
};
const tools: OpenAI.Chat.ChatCompletionTool[] = [
  { type: 'function', function: { name: 'get_weather', parameters: city } },
  { type: 'function', function: { name: 'get_time', parameters: city } },
];
const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
  { role: 'user', content: 'Weather and time in Rome?' },
];
/**
 * The answer form of a model that calls tools on its own (auto-tool-calls.ts: a JSON array of
 * `{"name", "arguments"}`) with exactly two calls, as a response_format grammar: a random-weight
 * model then answers with two calls in "auto" mode, which it would never write by itself.
 */
const twoCalls: OpenAI.Chat.ChatCompletionCreateParams['response_format'] = {
  type: 'json_schema',
  json_schema: {
    name: 'calls',
    schema: {
      type: 'array',
      minItems: 2,
      maxItems: 2,
      items: {
        type: 'object',
        properties: { name: { enum: ['get_weather', 'get_time'] }, arguments: city },
        required: ['name', 'arguments'],
        additionalProperties: false,
      },
    },
  },
};

export function hiddenEdgeTests(net: ClientsNetwork): void {
  describe('hidden edges, as OpenAI documents them', () => {
    const client = () => new OpenAI({ baseURL: net.baseURL, apiKey: net.key, maxRetries: 0 });
    const model = () => net.model;

    test('behavior: a stop sequence spanning two streamed pieces is cut exactly; its first half never reaches the client', async () => {
      const base = {
        model: model(),
        messages: [{ role: 'user' as const, content: 'Tell me a story.' }],
        temperature: 0,
        max_tokens: 96,
        logit_bias: NO_EOS,
      };
      const piecesOf = async (body: Record<string, unknown>) => {
        const pieces: string[] = [];
        const stream = await client().chat.completions.create({ ...base, ...body, stream: true });
        for await (const chunk of stream) {
          const content = chunk.choices[0]?.delta?.content;
          if (content) pieces.push(content);
        }
        return pieces;
      };
      const pieces = await piecesOf({});
      const full = pieces.join('');
      // The last characters of one piece and the first of the next (whole code points), where
      // that is the text's first occurrence of them (a stop string ends the answer at its first
      // occurrence). The node sends its first text at once and coalesces what follows
      // (chunk-coalescer.ts), so there is at least that boundary, always a first occurrence.
      let stop: string | undefined;
      let cutAt = 0;
      for (let k = 0, end = 0; k < pieces.length - 1 && stop === undefined; k++) {
        end += pieces[k]!.length;
        const tail = [...pieces[k]!].slice(-2).join('');
        const candidate = tail + [...pieces[k + 1]!].slice(0, 2).join('');
        if (full.indexOf(candidate) !== end - tail.length) continue;
        stop = candidate;
        cutAt = end - tail.length;
      }
      expect(stop, JSON.stringify(pieces)).toBeDefined();
      const streamed = await piecesOf({ stop: [stop!] });
      expect(streamed.join('')).toBe(full.slice(0, cutAt));
      const whole = await client().chat.completions.create({ ...base, stop: stop! });
      expect(whole.choices[0]!.message.content).toBe(full.slice(0, cutAt));
      expect(whole.choices[0]!.finish_reason).toBe('stop');
    });

    test('behavior: n > 1 with streaming and tools — each choice streams its own calls under its index', async () => {
      const request = {
        model: model(),
        messages,
        tools,
        tool_choice: 'required' as const,
        n: 2,
        seed: 1,
        max_tokens: 96,
      };
      // The SDK's stream helper joins each choice's tool-call deltas by choice and call index.
      const final = await client().chat.completions.stream(request).finalChatCompletion();
      const whole = await client().chat.completions.create(request);
      for (const answer of [final, whole]) {
        expect(answer.choices.map((c) => c.index)).toEqual([0, 1]);
        for (const choice of answer.choices) {
          expect(choice.finish_reason).toBe('tool_calls');
          expect(choice.message.content).toBeNull();
          const [call, ...more] = choice.message
            .tool_calls! as OpenAI.Chat.ChatCompletionMessageFunctionToolCall[];
          expect(more).toEqual([]);
          expect(['get_weather', 'get_time']).toContain(call!.function.name);
          expect(['Paris', 'Rome']).toContain(JSON.parse(call!.function.arguments).city);
        }
        expect(answer.choices[0]!.message.tool_calls![0]!.id).not.toBe(
          answer.choices[1]!.message.tool_calls![0]!.id,
        );
      }
      // Every chunk of the stream names its choice; each choice ends once.
      const stream = await client().chat.completions.create({ ...request, stream: true });
      const finishes: [number, string][] = [];
      for await (const chunk of stream)
        for (const c of chunk.choices) if (c.finish_reason) finishes.push([c.index, c.finish_reason]);
      expect(finishes.sort()).toEqual([
        [0, 'tool_calls'],
        [1, 'tool_calls'],
      ]);
    });

    test('behavior: logprobs with a forced tool call is answered, the call without content log-probabilities', async () => {
      const request = {
        model: model(),
        messages,
        tools,
        tool_choice: { type: 'function' as const, function: { name: 'get_weather' } },
        logprobs: true,
        top_logprobs: 2,
        max_tokens: 96,
      };
      const whole = await client().chat.completions.create(request);
      const [choice] = whole.choices;
      expect(choice!.finish_reason).toBe('tool_calls');
      expect(choice!.message.tool_calls).toHaveLength(1);
      expect(choice!.logprobs).toEqual({ content: null, refusal: null });
      const streamed = await client().chat.completions.stream(request).finalChatCompletion();
      expect(streamed.choices[0]!.message.tool_calls).toHaveLength(1);
    });

    test("edge: max_tokens and max_completion_tokens — either one limits the answer; both at once is OpenAI's 400", async () => {
      const base = { model: model(), messages, temperature: 0, logit_bias: NO_EOS };
      const alone = await client().chat.completions.create({ ...base, max_tokens: 5 });
      expect(alone.usage!.completion_tokens).toBe(5);
      expect(alone.choices[0]!.finish_reason).toBe('length');
      const newer = await client().chat.completions.create({ ...base, max_completion_tokens: 7 });
      expect(newer.usage!.completion_tokens).toBe(7);
      for (const stream of [false, true]) {
        await expect(
          client().chat.completions.create({ ...base, max_tokens: 5, max_completion_tokens: 7, stream }),
        ).rejects.toMatchObject({ status: 400, param: 'max_tokens', code: 'invalid_request' });
      }
      await expect(
        client().completions.create({
          model: model(),
          prompt: 'x',
          max_tokens: 5,
          max_completion_tokens: 7,
        } as never),
      ).rejects.toMatchObject({ status: 400, param: 'max_tokens' });
    });

    test('behavior: parallel_tool_calls false answers at most one call, in auto mode too, streamed or not', async () => {
      // Two choices each (n > 1 with tools in auto mode: each choice's calls are its own).
      const auto = {
        model: model(),
        messages,
        tools,
        response_format: twoCalls,
        max_tokens: 160,
        seed: 2,
        n: 2,
      };
      const parallel = await client().chat.completions.create(auto);
      for (const choice of parallel.choices) {
        expect(choice.finish_reason).toBe('tool_calls');
        expect(choice.message.tool_calls).toHaveLength(2);
      }
      const one = { ...auto, parallel_tool_calls: false };
      const whole = await client().chat.completions.create(one);
      const streamed = await client().chat.completions.stream(one).finalChatCompletion();
      const required = await client().chat.completions.create({
        ...one,
        response_format: undefined,
        tool_choice: 'required',
        n: 2,
      });
      const choices = [...whole.choices, ...streamed.choices, ...required.choices];
      expect(choices).toHaveLength(6);
      for (const choice of choices) {
        expect(choice.finish_reason).toBe('tool_calls');
        expect(choice.message.tool_calls).toHaveLength(1);
      }
    });
  });
}
