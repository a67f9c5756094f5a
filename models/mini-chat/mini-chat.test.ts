/**
 * The committed gpumesh/mini-chat files: each one's SHA-256 is the one the catalog pins (CI checks
 * the files, it does not retrain), and each quantisation, served by the daemon's own runtime,
 * answers the README's question and calls a tool the way a client expects — a strict one too, its
 * arguments held to the parameters in tool_choice auto.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { getLlama, type Llama } from 'node-llama-cpp';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createLlamaRuntime } from '../../node/src/runtimes/llama/llama-runtime.js';
import type { JsonObject, Runtime } from '../../node/src/runtimes/runtime.js';

const HERE = import.meta.dirname;
const catalog = JSON.parse(
  readFileSync(path.join(HERE, '../../coordinator/src/catalog/models.json'), 'utf8'),
) as {
  models: {
    id: string;
    contextLength: number;
    files: { quant: string; file: string; sha256?: string; sizeBytes: number }[];
  }[];
};
const entry = catalog.models.find((m) => m.id === 'gpumesh/mini-chat')!;

test('default: every committed file has the SHA-256 and size the catalog pins', () => {
  expect(entry.files.map((f) => f.quant).sort()).toEqual(['F16', 'Q4_0', 'Q8_0']);
  expect(entry.contextLength).toBeGreaterThanOrEqual(8192);
  let total = 0;
  for (const file of entry.files) {
    const bytes = readFileSync(path.join(HERE, file.file));
    total += bytes.length;
    expect({
      file: file.file,
      sha256: createHash('sha256').update(bytes).digest('hex'),
      size: bytes.length,
    }).toEqual({
      file: file.file,
      sha256: file.sha256,
      size: file.sizeBytes,
    });
  }
  expect(total).toBeLessThan(60 * 1024 * 1024);
});

describe.each(['F16', 'Q8_0', 'Q4_0'])('%s through the daemon runtime', (quant) => {
  let llama: Llama;
  let runtime: Runtime;
  beforeAll(async () => {
    llama = await getLlama({ gpu: false });
    const file = entry.files.find((f) => f.quant === quant)!.file;
    runtime = createLlamaRuntime({
      llama,
      threads: 1,
      models: [{ id: 'mini', path: path.join(HERE, file), maxConcurrency: 1, contextLength: 8192 }],
    });
    await runtime.load();
  });
  afterAll(() => runtime?.close());
  const chat = async (request: JsonObject) =>
    (await runtime.run({
      kind: 'chat',
      model: 'mini',
      stream: false,
      request: { temperature: 0, ...request },
    })) as unknown as {
      choices: {
        message: { content: string | null; tool_calls?: { function: { name: string; arguments: string } }[] };
        finish_reason: string;
      }[];
    };

  test("behavior: answers the README's question, and stops", async () => {
    const answer = await chat({ messages: [{ role: 'user', content: 'What is 12 + 30?' }], max_tokens: 64 });
    expect(answer.choices[0]!.message.content).toMatch(/\b42\b/);
    expect(answer.choices[0]!.finish_reason).toBe('stop');
  });

  test("behavior: answers npm start's printed example", async () => {
    const answer = await chat({
      messages: [{ role: 'user', content: 'Convert 3 kilometers to meters.' }],
      max_tokens: 32,
    });
    expect(answer.choices[0]!.message.content).toMatch(/\b3,?000\b/);
  });

  test('behavior: calls the tool the question needs, with its arguments from the prompt', async () => {
    const tools = [
      {
        type: 'function',
        function: {
          name: 'get_time',
          description: 'Get the local time in a city',
          parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        },
      },
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'Get the current weather in a city',
          parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        },
      },
    ];
    const answer = await chat({
      messages: [{ role: 'user', content: "What's the weather in Paris?" }],
      tools,
      max_tokens: 64,
    });
    const choice = answer.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(
      choice.message.tool_calls!.map((c) => [c.function.name, JSON.parse(c.function.arguments)]),
    ).toEqual([['get_weather', { city: 'Paris' }]]);
  });

  test('behavior: strict tools in tool_choice auto: the call holds to the parameters, prose still answers', async () => {
    const tool = (name: string, description: string, city: object) => ({
      type: 'function',
      function: {
        name,
        description,
        strict: true,
        parameters: { type: 'object', properties: { city }, required: ['city'], additionalProperties: false },
      },
    });
    const ask = async (content: string, city: object) =>
      (
        await chat({
          messages: [{ role: 'user', content }],
          tools: [
            tool('get_time', 'Get the local time in a city', { type: 'string' }),
            tool('get_weather', 'Get the current weather in a city', city),
          ],
          max_tokens: 64,
        })
      ).choices[0]!;
    const callsOf = (choice: Awaited<ReturnType<typeof ask>>) =>
      (choice.message.tool_calls ?? []).map((c) => ({
        name: c.function.name,
        args: JSON.parse(c.function.arguments) as { city: string },
      }));
    expect(callsOf(await ask("What's the weather in Paris?", { type: 'string' }))).toEqual([
      { name: 'get_weather', args: { city: 'Paris' } },
    ]);
    // Without the grammar mini-chat writes "Paris" here, one character too many.
    const short = { type: 'string', maxLength: 4 };
    const calls = callsOf(await ask("What's the weather in Paris?", short));
    expect(calls.map((c) => c.name)).toEqual(['get_weather']);
    expect(new Ajv2020().validate(short, calls[0]!.args.city), calls[0]!.args.city).toBe(true);
    const prose = await ask('What is 12 + 30?', short);
    expect(prose.message.content).toMatch(/\b42\b/);
    expect(prose.finish_reason).toBe('stop');
  });
});
