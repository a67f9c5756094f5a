/**
 * Clients no one here wrote, against npm start's default model (gpumesh/mini-chat, trained in this
 * repository) served by a real node daemon: what a newcomer's first agent does — a tool loop that
 * ends in an answer, structured output with the prompt's values, forced and parallel tool calls,
 * a streamed answer — through the official openai SDK's helpers, the OpenAI Agents SDK with its
 * default Responses model, LangChain JS and the Vercel AI SDK. Unlike clients.test.ts (random
 * weights: structure only), these check what the model says.
 */
import path from 'node:path';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { ChatOpenAI } from '@langchain/openai';
import { Agent, tool as agentTool, run, setDefaultOpenAIClient, setTracingDisabled } from '@openai/agents';
import { generateObject, generateText, stepCountIs, tool } from 'ai';
import OpenAI from 'openai';
import { zodResponseFormat } from 'openai/helpers/zod';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { type ClientsNetwork, startClientsNetwork } from './support/clients-network.js';

const MODEL_FILE = path.resolve(import.meta.dirname, '../models/mini-chat/gpumesh-mini-chat-F16.gguf');
const net = {} as ClientsNetwork;

beforeAll(async () => {
  Object.assign(net, await startClientsNetwork('clients-mini-chat', { modelFile: MODEL_FILE }));
  setTracingDisabled(true);
  type AgentsClient = Parameters<typeof setDefaultOpenAIClient>[0];
  setDefaultOpenAIClient(
    new OpenAI({ baseURL: net.baseURL, apiKey: net.key, maxRetries: 0 }) as unknown as AgentsClient,
  );
}, 120_000);
afterAll(() => net.close?.());

/** The weather tool's answer: what a real weather API returns. */
const weatherIn = (city: string) => ({ city, temperature_c: 21, conditions: 'sunny' });
const City = z.object({ city: z.string() });
const Person = z.object({ name: z.string(), age: z.number().int() });
/** A chat answer's function calls as [name, arguments]. */
const callsOf = (calls: OpenAI.Chat.ChatCompletionMessageToolCall[] | undefined) =>
  (calls ?? []).flatMap((c) =>
    c.type === 'function' ? [[c.function.name, JSON.parse(c.function.arguments)]] : [],
  );

describe('the official openai SDK', () => {
  const client = () => new OpenAI({ baseURL: net.baseURL, apiKey: net.key, maxRetries: 0 });

  test('default: runTools calls the tool, reads its result and answers with it', async () => {
    const runner = client().chat.completions.runTools({
      model: net.model,
      messages: [{ role: 'user', content: "What's the weather in Paris?" }],
      temperature: 0,
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'Get the current weather in a city',
            parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
            function: (args: { city: string }) => weatherIn(args.city),
            parse: JSON.parse,
          },
        },
      ],
    });
    const answer = await runner.finalContent();
    const calls = (await runner.allChatCompletions()).flatMap((c) => c.choices[0]!.message.tool_calls ?? []);
    expect(callsOf(calls)).toEqual([['get_weather', { city: 'Paris' }]]);
    expect(answer).toMatch(/21/);
  });

  test('default: parse fills a zod schema with the prompt’s values', async () => {
    const completion = await client().chat.completions.parse({
      model: net.model,
      messages: [{ role: 'user', content: 'Extract as JSON: the name is Mia; the age is 34.' }],
      response_format: zodResponseFormat(Person, 'person'),
      temperature: 0,
    });
    expect(completion.choices[0]!.message.parsed).toEqual({ name: 'Mia', age: 34 });
  });

  test('behavior: two questions, two tool calls at once; a forced tool is called', async () => {
    const tools: OpenAI.Chat.ChatCompletionTool[] = [
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'Get the current weather in a city',
          parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        },
      },
      {
        type: 'function',
        function: {
          name: 'get_time',
          description: 'Get the local time in a city',
          parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        },
      },
    ];
    const both = await client().chat.completions.create({
      model: net.model,
      messages: [{ role: 'user', content: "What's the weather in Oslo? Also: what time is it in Tokyo?" }],
      tools,
      temperature: 0,
    });
    expect(callsOf(both.choices[0]!.message.tool_calls)).toEqual([
      ['get_weather', { city: 'Oslo' }],
      ['get_time', { city: 'Tokyo' }],
    ]);
    const forced = await client().chat.completions.create({
      model: net.model,
      messages: [{ role: 'user', content: 'What time is it in Lima?' }],
      tools,
      tool_choice: { type: 'function', function: { name: 'get_time' } },
      temperature: 0,
    });
    expect(callsOf(forced.choices[0]!.message.tool_calls)).toEqual([['get_time', { city: 'Lima' }]]);
  });

  test('default: the stream helper streams the answer', async () => {
    const stream = client().chat.completions.stream({
      model: net.model,
      messages: [{ role: 'user', content: 'What is 12 + 30?' }],
      temperature: 0,
    });
    let deltas = 0;
    stream.on('content', () => deltas++);
    expect(await stream.finalContent()).toMatch(/\b42\b/);
    expect(deltas).toBeGreaterThan(1);
  });
});

describe('the OpenAI Agents SDK (its default Responses model)', () => {
  const weather = () =>
    agentTool({
      name: 'get_weather',
      description: 'Get the current weather in a city',
      parameters: City,
      execute: async ({ city }) => JSON.stringify(weatherIn(city)),
    });

  test('default: an agent with a tool runs the loop to an answer that uses the result', async () => {
    const agent = new Agent({
      name: 'assistant',
      instructions: 'You are a helpful assistant.',
      model: net.model,
      tools: [weather()],
      modelSettings: { temperature: 0 },
    });
    const result = await run(agent, "What's the weather in Paris?");
    const call = result.newItems.find((i) => i.type === 'tool_call_item')!.rawItem as {
      name: string;
      arguments: string;
    };
    expect([call.name, JSON.parse(call.arguments)]).toEqual(['get_weather', { city: 'Paris' }]);
    expect(String(result.finalOutput)).toMatch(/21/);
  });

  test('default: a streamed run ends with the answer', async () => {
    const agent = new Agent({ name: 'assistant', model: net.model, modelSettings: { temperature: 0 } });
    const stream = await run(agent, 'Convert 3 kilometers to meters.', { stream: true });
    for await (const _ of stream) {
      // drain the events
    }
    await stream.completed;
    expect(String(stream.finalOutput)).toMatch(/\b3000\b/);
  });

  test('default: outputType gives the prompt’s values, parsed', async () => {
    const agent = new Agent({
      name: 'extract',
      model: net.model,
      outputType: Person,
      modelSettings: { temperature: 0 },
    });
    const result = await run(agent, 'Extract as JSON: the name is Omar; the age is 52.');
    expect(result.finalOutput).toEqual({ name: 'Omar', age: 52 });
  });
});

describe('LangChain JS', () => {
  const chat = () =>
    new ChatOpenAI({
      model: net.model,
      apiKey: net.key,
      configuration: { baseURL: net.baseURL },
      temperature: 0,
      maxRetries: 0,
    });

  test('default: bindTools gives the call the question needs', async () => {
    const getWeather = {
      name: 'get_weather',
      description: 'Get the current weather in a city',
      schema: City,
    };
    const message = await chat().bindTools([getWeather]).invoke("What's the weather in Rome?");
    expect(message.tool_calls!.map((c) => [c.name, c.args])).toEqual([['get_weather', { city: 'Rome' }]]);
  });

  test('default: withStructuredOutput fills the schema', async () => {
    const person = await chat()
      .withStructuredOutput(Person)
      .invoke('Extract as JSON: the name is Lena; the age is 27.');
    expect(person).toEqual({ name: 'Lena', age: 27 });
  });
});

describe('the Vercel AI SDK', () => {
  const model = (supportsStructuredOutputs = false) =>
    createOpenAICompatible({
      name: 'gpumesh',
      baseURL: net.baseURL,
      apiKey: net.key,
      supportsStructuredOutputs,
    }).chatModel(net.model);

  test('default: generateText runs the tool and answers with its result', async () => {
    const result = await generateText({
      model: model(),
      prompt: "What's the weather in Berlin?",
      temperature: 0,
      tools: {
        get_weather: tool({
          description: 'Get the current weather in a city',
          inputSchema: City,
          execute: async ({ city }) => weatherIn(city),
        }),
      },
      stopWhen: stepCountIs(3),
    });
    expect(result.steps[0]!.toolCalls.map((c) => [c.toolName, c.input])).toEqual([
      ['get_weather', { city: 'Berlin' }],
    ]);
    expect(result.text).toMatch(/21/);
  });

  // With the provider told that /v1 holds a JSON schema (`supportsStructuredOutputs`), the AI SDK sends
  // it as response_format json_schema and the node's grammar holds the keys: how to set the AI SDK up
  // for gpumesh (README.md). Without it the SDK's JSON mode leaves the keys to the model (below).
  test('default: generateObject fills the schema when the provider declares structured outputs', async () => {
    const { object } = await generateObject({
      model: model(true),
      schema: Person,
      prompt: 'Extract as JSON: the name is Hugo; the age is 45.',
      temperature: 0,
    });
    expect(object).toEqual({ name: 'Hugo', age: 45 });
  });

  // Fails on mini-chat as trained in sessions 20 and 21 (models/mini-chat/README.md): in the AI SDK's JSON mode (the schema in a system message, no grammar for it) the object has the age but a key of its own for the name (session 20: {"color":"orange","age":45}).
  // test.fails keeps the check running: when a better model passes it, this turns red to be promoted.
  test.fails('default: generateObject fills the schema', async () => {
    const { object } = await generateObject({
      model: model(),
      schema: Person,
      prompt: 'Extract as JSON: the name is Hugo; the age is 45.',
      temperature: 0,
    });
    expect(object).toEqual({ name: 'Hugo', age: 45 });
  });
});

describe('bad input on the default model', () => {
  test('error: a prompt over the served context is a 400 before any byte, streamed or not', async () => {
    // Each "word " is two tokens of mini-chat's vocabulary (the space is its own token): ~10,000,
    // over the 8,192 npm start serves it with (this network's node: its default 4,096).
    const content = 'word '.repeat(5_000);
    for (const stream of [false, true]) {
      const response = await fetch(`${net.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${net.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          model: net.model,
          messages: [{ role: 'user', content }],
          stream,
          max_tokens: 16,
        }),
      });
      expect(response.status).toBe(400);
      expect(response.headers.get('content-type')).toMatch(/application\/json/);
      const body = (await response.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('context_length_exceeded');
      expect(body.error.message).toMatch(/The prompt has 10\d{3} tokens; the context holds \d+/);
    }
  });
});
