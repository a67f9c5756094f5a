/**
 * The Vercel AI SDK (`ai`): with `@ai-sdk/openai-compatible`, and with `@ai-sdk/openai`, whose
 * default is the Responses API.
 * Registered by clients.test.ts, on its network.
 */
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateObject, generateText, type LanguageModel, stepCountIs, streamText, tool } from 'ai';
import { describe, expect, test } from 'vitest';
import { type ClientsNetwork, Place, Weather } from '../support/clients-network.js';

export function aiSdkTests(net: ClientsNetwork): void {
  /** generateObject on the Weather schema gives an object of it. */
  const expectWeatherObject = async (model: LanguageModel, maxOutputTokens: number) => {
    const { object } = await generateObject({
      model,
      schema: Weather,
      prompt: 'Weather in Paris?',
      maxOutputTokens,
    });
    expect(Weather.parse(object)).toEqual(object);
  };
  /** generateObject on Place (.max(16), .min(-90).max(60)): a few seeds, every object of it. */
  const expectPlaceObjects = async (model: LanguageModel) => {
    for (const seed of [1, 2, 3, 4]) {
      const { object } = await generateObject({
        model,
        schema: Place,
        prompt: 'Where?',
        maxOutputTokens: 256,
        temperature: 1.5,
        seed,
      });
      expect(Place.parse(object)).toEqual(object);
    }
  };

  describe('Vercel AI SDK (ai + @ai-sdk/openai-compatible)', () => {
    const provider = () =>
      createOpenAICompatible({
        name: 'gpumesh',
        baseURL: net.baseURL,
        apiKey: net.key,
        supportsStructuredOutputs: true,
      });

    test('default: generateText and streamText', async () => {
      const { text, usage } = await generateText({
        model: provider()(net.model),
        prompt: 'Hello',
        maxOutputTokens: 16,
      });
      expect(typeof text).toBe('string');
      expect(usage.inputTokens).toBeGreaterThan(0);
      // Seeded: the random-weight model may otherwise end at its first token (an empty stream).
      const stream = streamText({
        model: provider()(net.model),
        prompt: 'Hello',
        maxOutputTokens: 16,
        seed: 3,
      });
      let pieces = 0;
      for await (const piece of stream.textStream) if (piece.length > 0) pieces++;
      expect(pieces).toBeGreaterThan(0);
    });

    test('default: generateObject returns an object of the schema', async () => {
      await expectWeatherObject(provider()(net.model), 256);
    });

    test('behavior: generateObject holds .max(16) and .min(-90).max(60)', async () => {
      await expectPlaceObjects(provider()(net.model));
    });
  });

  describe('Vercel AI SDK (ai + @ai-sdk/openai, its default Responses model)', () => {
    const openai = () => createOpenAI({ baseURL: net.baseURL, apiKey: net.key });

    test('default: generateText with a tool: the call, its result, then a second step', async () => {
      let ran = 0;
      const result = await generateText({
        model: openai()(net.model),
        prompt: 'What is the weather in Paris?',
        maxOutputTokens: 128,
        tools: {
          get_weather: tool({
            description: 'The weather in a city',
            inputSchema: Weather.pick({ city: true }),
            execute: async ({ city }) => {
              ran++;
              return `${city}: 21 °C, sunny`;
            },
          }),
        },
        toolChoice: { type: 'tool', toolName: 'get_weather' },
        // The second step sends the call back (by reference to the stored response, the SDK's default)
        // with its result, and answers in text.
        prepareStep: ({ stepNumber }) => (stepNumber > 0 ? { toolChoice: 'none' } : {}),
        stopWhen: stepCountIs(2),
      });
      expect(ran).toBe(1);
      expect(result.steps).toHaveLength(2);
      const [call] = result.steps[0]!.toolCalls;
      expect(call!.toolName).toBe('get_weather');
      expect(Weather.pick({ city: true }).parse(call!.input)).toEqual(call!.input);
      expect(result.steps[1]!.toolCalls).toHaveLength(0);
      expect(result.usage.inputTokens).toBeGreaterThan(0);
    });

    test('default: generateObject returns an object of the schema', async () => {
      await expectWeatherObject(openai()(net.model), 128);
    });

    test('behavior: generateObject holds .max(16) and .min(-90).max(60) (text.format)', async () => {
      await expectPlaceObjects(openai()(net.model));
    });
  });
}
