/**
 * The official `openai` SDK: its Responses helpers (create, stream, parse with zod), an
 * item_reference, and completions with n.
 * Registered by clients.test.ts, on its network.
 */
import OpenAI from 'openai';
import { zodResponsesFunction, zodTextFormat } from 'openai/helpers/zod';
import { describe, expect, test } from 'vitest';
import { type ClientsNetwork, Weather } from '../support/clients-network.js';

export function openaiSdkTests(net: ClientsNetwork): void {
  describe('the openai SDK: responses.create, stream and parse', () => {
    const client = () => new OpenAI({ baseURL: net.baseURL, apiKey: net.key, maxRetries: 0 });

    test('default: create, stream and parse (a zod text format and a zod function)', async () => {
      const created = await client().responses.create({
        model: net.model,
        input: 'Hi',
        max_output_tokens: 8,
      });
      expect(created).toMatchObject({ object: 'response', model: net.model });
      const streamed = await client()
        .responses.stream({ model: net.model, input: 'Hi', max_output_tokens: 8 })
        .finalResponse();
      expect(streamed.usage!.output_tokens).toBeGreaterThan(0);
      const parsed = await client().responses.parse({
        model: net.model,
        input: 'Weather in Rome?',
        text: { format: zodTextFormat(Weather, 'weather') },
        max_output_tokens: 128,
      });
      expect(Weather.parse(parsed.output_parsed)).toEqual(parsed.output_parsed);
      const called = await client().responses.parse({
        model: net.model,
        input: 'Weather in Rome?',
        tools: [zodResponsesFunction({ name: 'get_weather', parameters: Weather })],
        tool_choice: 'required',
        max_output_tokens: 128,
      });
      const call = called.output.find((o) => o.type === 'function_call')!;
      expect(Weather.parse(call.parsed_arguments)).toEqual(call.parsed_arguments);
    });
  });

  describe('the Responses API: item_reference', () => {
    test('behavior: a stored call referenced by id stands for the call; an unknown id is 404 naming input', async () => {
      const client = new OpenAI({ baseURL: net.baseURL, apiKey: net.key, maxRetries: 0 });
      const tools: OpenAI.Responses.Tool[] = [
        {
          type: 'function',
          name: 'get_weather',
          parameters: {
            type: 'object',
            properties: { city: { type: 'string', enum: ['Paris', 'Rome'] } },
            required: ['city'],
            additionalProperties: false,
          },
          strict: true,
        },
      ];
      const first = await client.responses.create({
        model: net.model,
        input: 'Weather in Paris?',
        tools,
        tool_choice: 'required',
        max_output_tokens: 128,
      });
      const call = first.output.find((o) => o.type === 'function_call')!;
      const next = await client.responses.create({
        model: net.model,
        input: [
          { role: 'user', content: 'Weather in Paris?' },
          { type: 'item_reference', id: call.id! },
          { type: 'function_call_output', call_id: call.call_id, output: 'sunny' },
        ],
        tools,
        max_output_tokens: 4,
      });
      expect(next.usage!.input_tokens).toBeGreaterThan(first.usage!.input_tokens);
      await expect(
        client.responses.create({
          model: net.model,
          input: [{ type: 'item_reference', id: `fc_${'0'.repeat(48)}_0` }],
          max_output_tokens: 4,
        }),
      ).rejects.toMatchObject({ status: 404, param: 'input' });
    });
  });

  describe('completions on the llama runtime', () => {
    test('default: n: 2 gives two choices, whole and streamed, the same under one seed', async () => {
      const client = new OpenAI({ baseURL: net.baseURL, apiKey: net.key, maxRetries: 0 });
      const whole = await client.completions.create({
        model: net.model,
        prompt: 'Once',
        n: 2,
        max_tokens: 4,
        seed: 5,
      });
      expect(whole.choices.map((c) => c.index)).toEqual([0, 1]);
      expect(whole.usage!.completion_tokens).toBeGreaterThan(0);
      const texts = ['', ''];
      const stream = await client.completions.create({
        model: net.model,
        prompt: 'Once',
        n: 2,
        max_tokens: 4,
        seed: 5,
        stream: true,
      });
      for await (const chunk of stream) for (const c of chunk.choices) texts[c.index] += c.text;
      expect(texts).toEqual(whole.choices.map((c) => c.text));
    });
  });
}
