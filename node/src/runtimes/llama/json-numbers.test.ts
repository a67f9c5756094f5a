/**
 * JSON `number` values under the grammar on the random-weight model at temperature 1.5 (it writes
 * whatever the grammar lets through): every number parses to a finite double inside its schema's
 * minimum/maximum (issue 45). Before the compiler (node-llama-cpp's JSON Schema grammar) a number
 * took any exponent: `"y":-8E405` parsed to -Infinity, and bounds were ignored.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, test } from 'vitest';
import type { JsonObject } from '../runtime.js';
import { useTinyRuntime } from './tiny-runtime-fixture.js';

const tiny = useTinyRuntime();

/** JSON-schema answers sampled (seeds 1…ANSWERS, two at a time: the runtime has two sequences). */
const ANSWERS = 200;

/** Numbers with every kind of bound: none (the issue's `{x, y}`), one side, both, excluded, tiny, far. */
const NUMBERS = {
  x: { type: 'number' },
  y: { type: 'number' },
  lat: { type: 'number', minimum: -90, maximum: 90 },
  p: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 },
  below: { type: 'number', maximum: -0.5 },
  above: { type: 'number', minimum: 1e9 },
  narrow: { type: 'number', minimum: 0.0015, maximum: 0.0025 },
  far: { type: 'number', minimum: -1e300, maximum: 1e300 },
} as const;

const SCHEMA = {
  type: 'object',
  properties: NUMBERS,
  required: Object.keys(NUMBERS),
  additionalProperties: false,
};

/** Every number anywhere in `value` (a JSON.parse result). */
function numbersIn(value: unknown): number[] {
  if (typeof value === 'number') return [value];
  if (Array.isArray(value)) return value.flatMap(numbersIn);
  if (value && typeof value === 'object') return Object.values(value).flatMap(numbersIn);
  return [];
}

/**
 * The numbers written in JSON text `text`, whole or cut short by max_tokens: each number token
 * outside strings, as JSON.parse reads it.
 */
function numberTokens(text: string): number[] {
  const out: number[] = [];
  const token = /"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
  for (let i = 0; i < text.length; ) {
    token.lastIndex = i;
    const match = token.exec(text);
    if (!match) {
      if (text[i] === '"') break; // a string cut short: no number after it
      i++;
      continue;
    }
    if (match[0][0] !== '"') out.push(JSON.parse(match[0]) as number);
    i = token.lastIndex;
  }
  return out;
}

/** The chat answers' message content to `extra` for seeds from…to (`stopped`: each one whole). */
async function contents(extra: JsonObject, from: number, to: number, stopped = true): Promise<string[]> {
  const one = async (seed: number) => {
    const response = await tiny.whole('chat', {
      messages: [{ role: 'user', content: 'Numbers, please.' }],
      max_tokens: 300,
      temperature: 1.5,
      seed,
      ...extra,
    });
    const [choice] = response.choices as { message: { content: string }; finish_reason: string }[];
    if (stopped) expect(choice!.finish_reason).toBe('stop');
    return choice!.message.content;
  };
  const out: string[] = [];
  for (let seed = from; seed <= to; seed += 2) out.push(...(await Promise.all([one(seed), one(seed + 1)])));
  return out;
}

describe('JSON numbers on the random-weight model', () => {
  test(`behavior: ${ANSWERS} json_schema answers — every number finite and within minimum/maximum`, async () => {
    const validate = new Ajv2020({ strict: false }).compile(SCHEMA);
    const format = { type: 'json_schema', json_schema: { name: 'numbers', strict: true, schema: SCHEMA } };
    const answers = (await contents({ response_format: format }, 1, ANSWERS)).map(
      (content) => JSON.parse(content) as Record<string, number>,
    );
    expect(answers).toHaveLength(ANSWERS);
    const values = answers.flatMap(numbersIn);
    expect(values).toHaveLength(ANSWERS * Object.keys(NUMBERS).length);
    expect(values.filter((v) => !Number.isFinite(v))).toEqual([]);
    // ajv checks minimum/maximum and the excluded bounds on the parsed doubles.
    expect(answers.filter((a) => !validate(a))).toEqual([]);
    // The random model ranges over what the grammar allows: not one value repeated.
    expect(new Set(answers.map((a) => a.x)).size).toBeGreaterThan(ANSWERS / 2);
  }, 600_000);

  test('behavior: json_object and the arguments of a tool that is not strict — no number is ±Infinity', async () => {
    // Free JSON runs long on a random model: answers cut by max_tokens count too, token by token.
    const free = await contents({ response_format: { type: 'json_object' } }, 1, 24, false);
    const tools = [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }];
    const calls: string[] = [];
    for (let seed = 1; seed <= 24; seed++) {
      const response = (await tiny.whole('chat', {
        messages: [{ role: 'user', content: 'x' }],
        tools,
        tool_choice: 'required',
        temperature: 1.5,
        seed,
        max_tokens: 300,
      })) as unknown as { choices: { message: { tool_calls: { function: { arguments: string } }[] } }[] };
      calls.push(response.choices[0]!.message.tool_calls[0]!.function.arguments);
    }
    const values = [...free, ...calls].flatMap(numberTokens);
    expect(values.length).toBeGreaterThan(0);
    expect(values.filter((v) => !Number.isFinite(v))).toEqual([]);
  }, 300_000);
});
