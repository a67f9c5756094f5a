/**
 * Two more agent frameworks no one here wrote, against npm start's default model (gpumesh/mini-chat)
 * served by a real node daemon: LlamaIndex.TS (its OpenAI LLM and its agent workflow) and Mastra
 * (its Agent on the Vercel AI SDK's OpenAI-compatible provider). As in clients-mini-chat.test.ts,
 * these check what the model says, at temperature 0.
 */
import path from 'node:path';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { tool as llamaTool } from '@llamaindex/core/tools';
import { OpenAI as LlamaOpenAI } from '@llamaindex/openai';
import { agent as llamaAgent } from '@llamaindex/workflow';
import { Agent as MastraAgent } from '@mastra/core/agent';
import { createTool } from '@mastra/core/tools';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { type ClientsNetwork, startClientsNetwork } from './support/clients-network.js';

const MODEL_FILE = path.resolve(import.meta.dirname, '../models/mini-chat/gpumesh-mini-chat-F16.gguf');
const net = {} as ClientsNetwork;

beforeAll(async () => {
  Object.assign(net, await startClientsNetwork('clients-mini-chat-agents', { modelFile: MODEL_FILE }));
}, 120_000);
afterAll(() => net.close?.());

/** The weather tool's answer: what a real weather API returns. */
const weatherIn = (city: string) => ({ city, temperature_c: 21, conditions: 'sunny' });
const City = z.object({ city: z.string() });
const Person = z.object({ name: z.string(), age: z.number().int() });

describe('LlamaIndex.TS', () => {
  const llm = () =>
    new LlamaOpenAI({
      model: net.model,
      apiKey: net.key,
      baseURL: net.baseURL,
      temperature: 0,
      maxRetries: 0,
    });
  const weather = () =>
    llamaTool({
      name: 'get_weather',
      description: 'Get the current weather in a city',
      parameters: City,
      execute: ({ city }) => weatherIn(city),
    });

  test('default: chat answers the question', async () => {
    const response = await llm().chat({ messages: [{ role: 'user', content: 'What is 12 + 30?' }] });
    expect(String(response.message.content)).toMatch(/\b42\b/);
  });

  test('default: a streamed chat streams the answer', async () => {
    const stream = await llm().chat({
      messages: [{ role: 'user', content: 'Convert 3 kilometers to meters.' }],
      stream: true,
    });
    let text = '';
    let deltas = 0;
    for await (const chunk of stream) {
      text += chunk.delta;
      deltas++;
    }
    expect(text).toMatch(/\b3000\b/);
    expect(deltas).toBeGreaterThan(1);
  });

  test('default: chat with a tool gives the call the question needs', async () => {
    const response = await llm().chat({
      messages: [{ role: 'user', content: "What's the weather in Rome?" }],
      tools: [weather()],
    });
    const calls =
      (response.message.options as { toolCall?: { name: string; input: unknown }[] }).toolCall ?? [];
    expect(calls.map((c) => [c.name, typeof c.input === 'string' ? JSON.parse(c.input) : c.input])).toEqual([
      ['get_weather', { city: 'Rome' }],
    ]);
  });

  test('default: responseFormat fills a zod schema with the prompt’s values', async () => {
    const response = await llm().chat({
      messages: [{ role: 'user', content: 'Extract as JSON: the name is Ida; the age is 61.' }],
      responseFormat: Person,
    });
    expect(Person.parse(JSON.parse(String(response.message.content)))).toEqual({ name: 'Ida', age: 61 });
  });

  test('default: an agent runs the tool loop to an answer that uses the result', async () => {
    const result = await llamaAgent({ llm: llm(), tools: [weather()] }).run("What's the weather in Paris?");
    expect(String(result.data.result)).toMatch(/\b21\b/);
  });
});

describe('Mastra', () => {
  const model = () =>
    createOpenAICompatible({ name: 'gpumesh', baseURL: net.baseURL, apiKey: net.key }).chatModel(net.model);
  const weather = createTool({
    id: 'get_weather',
    description: 'Get the current weather in a city',
    inputSchema: City,
    execute: async ({ context }) => weatherIn(context.city),
  });

  test('default: generate answers the question', async () => {
    const agent = new MastraAgent({
      name: 'assistant',
      instructions: 'You are a helpful assistant.',
      model: model(),
    });
    const result = await agent.generate('What is 12 + 30?', { modelSettings: { temperature: 0 } });
    expect(result.text).toMatch(/\b42\b/);
  });

  test('default: stream streams the answer', async () => {
    const agent = new MastraAgent({
      name: 'assistant',
      instructions: 'You are a helpful assistant.',
      model: model(),
    });
    const stream = await agent.stream('Convert 3 kilometers to meters.', {
      modelSettings: { temperature: 0 },
    });
    let text = '';
    let deltas = 0;
    for await (const delta of stream.textStream) {
      text += delta;
      deltas++;
    }
    expect(text).toMatch(/\b3000\b/);
    expect(deltas).toBeGreaterThan(1);
  });

  test('default: structuredOutput fills the schema with the prompt’s values', async () => {
    const agent = new MastraAgent({
      name: 'extract',
      instructions: 'You are a helpful assistant.',
      model: model(),
    });
    const result = await agent.generate('Extract as JSON: the name is Kofi; the age is 38.', {
      structuredOutput: { schema: Person },
      modelSettings: { temperature: 0 },
    });
    expect(result.object).toEqual({ name: 'Kofi', age: 38 });
  });

  test('default: an agent with a tool calls it and answers with its result', async () => {
    const agent = new MastraAgent({
      name: 'assistant',
      instructions: 'You are a helpful assistant.',
      model: model(),
      tools: { get_weather: weather },
    });
    const result = await agent.generate("What's the weather in Paris?", {
      modelSettings: { temperature: 0 },
    });
    const calls = result.toolCalls.map((c) => [c.payload.toolName, c.payload.args]);
    expect(calls).toEqual([['get_weather', { city: 'Paris' }]]);
    expect(result.text).toMatch(/\b21\b/);
  });
});
