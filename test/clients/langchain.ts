/**
 * LangChain JS (`@langchain/openai`): chat completions, embeddings, and `useResponsesApi`.
 * Registered by clients.test.ts, on its network.
 */
import { ChatOpenAI, OpenAIEmbeddings } from '@langchain/openai';
import { describe, expect, test } from 'vitest';
import { type ClientsNetwork, Place, Weather } from '../support/clients-network.js';

export function langchainTests(net: ClientsNetwork): void {
  /** LangChain's chat model on the network's chat model; over /v1/responses with `useResponsesApi`. */
  const chatModel = (maxTokens: number, useResponsesApi?: true) =>
    new ChatOpenAI({
      model: net.model,
      apiKey: net.key,
      configuration: { baseURL: net.baseURL },
      maxTokens,
      maxRetries: 0,
      ...(useResponsesApi ? { useResponsesApi } : {}),
    });

  describe('LangChain JS (@langchain/openai)', () => {
    const chat = () => chatModel(16);

    test('default: invoke and stream', async () => {
      const reply = await chat().invoke('Hello');
      expect(typeof reply.content).toBe('string');
      expect(reply.usage_metadata?.input_tokens).toBeGreaterThan(0);
      let streamed = 0;
      for await (const chunk of await chat().stream('Hello'))
        if (typeof chunk.content === 'string') streamed++;
      expect(streamed).toBeGreaterThan(0);
    });

    test('default: bindTools with a forced tool gives a tool call whose arguments fit its schema', async () => {
      const model = chatModel(256);
      const bound = model.bindTools(
        [{ name: 'get_weather', description: 'The weather in a city', schema: Weather }],
        { tool_choice: 'get_weather' },
      );
      const reply = await bound.invoke('What is the weather in Paris?');
      expect(reply.tool_calls).toHaveLength(1);
      expect(reply.tool_calls![0]!.name).toBe('get_weather');
      expect(Weather.parse(reply.tool_calls![0]!.args)).toBeTruthy();
    });

    test('default: withStructuredOutput on a JSON schema returns the parsed object', async () => {
      const model = chatModel(256);
      for (const method of ['jsonSchema', 'functionCalling'] as const) {
        const structured = model.withStructuredOutput(Weather, { name: 'weather', method });
        const value = await structured.invoke('Weather in Rome?');
        expect(Weather.parse(value), method).toBeTruthy();
      }
    });

    test('behavior: withStructuredOutput holds z.string().max(16) and z.number().min(-90).max(60)', async () => {
      for (const method of ['jsonSchema', 'functionCalling'] as const) {
        for (const seed of [1, 2, 3, 4]) {
          const model = new ChatOpenAI({
            model: net.model,
            apiKey: net.key,
            configuration: { baseURL: net.baseURL },
            maxTokens: 256,
            maxRetries: 0,
            temperature: 1.5,
            modelKwargs: { seed },
          });
          const value = await model.withStructuredOutput(Place, { name: 'place', method }).invoke('Where?');
          expect(Place.parse(value), `${method} ${seed}`).toEqual(value);
        }
      }
    });

    test('default: OpenAIEmbeddings.embedDocuments on 1,000 texts', async () => {
      const embeddings = new OpenAIEmbeddings({
        model: net.embedModel,
        apiKey: net.key,
        configuration: { baseURL: net.baseURL },
        maxRetries: 0,
      });
      const texts = Array.from({ length: 1_000 }, (_, i) => `document number ${i}`);
      const vectors = await embeddings.embedDocuments(texts);
      expect(vectors).toHaveLength(1_000);
      expect(new Set(vectors.map((v) => v.length)).size).toBe(1);
      expect(vectors[0]!.length).toBeGreaterThan(0);
    }, 120_000);
  });

  describe('LangChain JS with useResponsesApi', () => {
    const chat = () => chatModel(128, true);

    test('default: invoke, a forced tool and structured output over /v1/responses', async () => {
      const reply = await chat().invoke('Hello');
      expect(reply.usage_metadata?.input_tokens).toBeGreaterThan(0);
      const bound = chat().bindTools(
        [{ name: 'get_weather', description: 'The weather in a city', schema: Weather }],
        { tool_choice: 'get_weather' },
      );
      const called = await bound.invoke('What is the weather in Paris?');
      expect(called.tool_calls).toHaveLength(1);
      expect(Weather.parse(called.tool_calls![0]!.args)).toBeTruthy();
      const structured = chat().withStructuredOutput(Weather, { name: 'weather', method: 'jsonSchema' });
      expect(Weather.parse(await structured.invoke('Weather in Rome?'))).toBeTruthy();
    });
  });
}
