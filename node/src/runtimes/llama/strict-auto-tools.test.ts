/**
 * A strict tool the model may call on its own (`tool_choice` "auto"): the answer is prose or calls
 * whose arguments hold to the tool's parameters, under the grammar of either (json-grammars.ts
 * `forAutoCalls`), on the random-weight model (the harshest test of a grammar) at temperature 1.5,
 * every call validated by ajv. logit_bias pushes the model toward `[` and `{`, so that about one
 * answer in four begins `[{`: before the grammar those were text like `[{\x15as…` given back as
 * content; now they are calls.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, test } from 'vitest';
import type { JsonObject } from '../runtime.js';
import { useTinyRuntime } from './tiny-runtime-fixture.js';

const tiny = useTinyRuntime();
const ajv = new Ajv2020({ strict: false });

/**
 * The tiny model's byte token of `[` and its `{` (build-tiny-model.ts: bytes from id 3, printable
 * ASCII from 260). The pair that most often begins `[{`: after its `[` character token the random
 * model writes `[` again.
 */
const TOWARD_CALLS = { '94': 30, '350': 30 };
/** A test's time: two dozen answers on this shared machine. */
const TIMEOUT_MS = 240_000;
/** Answers per test (two at a time: the runtime has two sequences). */
const SAMPLES = 24;

const forecast = {
  type: 'object',
  properties: {
    city: { type: 'string', minLength: 1, maxLength: 8 },
    days: { type: 'integer', minimum: 1, maximum: 7 },
    unit: { enum: ['c', 'f'] },
    note: { type: 'string', maxLength: 4 },
  },
  required: ['city', 'days', 'unit'],
  additionalProperties: false,
};
const empty = { type: 'object', properties: {}, additionalProperties: false };
const validators: Record<string, (args: unknown) => boolean> = {
  forecast: ajv.compile(forecast),
  ping: ajv.compile(empty),
};
const tool = (name: string, parameters: object, strict = true) => ({
  type: 'function',
  function: { name, strict, parameters },
});

type Call = { function: { name: string; arguments: string } };
type Choice = { message: { content: string | null; tool_calls?: Call[] }; finish_reason: string };
/** An answer that began the call array without being calls (what the grammar rules out). */
const BEGUN_CALLS = /^\s*\[\s*\{/;

/** Choice 0 of `SAMPLES` answers in auto mode, seeds 1…SAMPLES. */
async function answers(extra: JsonObject): Promise<Choice[]> {
  const one = async (seed: number) => {
    const response = await tiny.whole('chat', {
      messages: [{ role: 'user', content: 'Forecast, please.' }],
      max_tokens: 160,
      temperature: 1.5,
      seed,
      logit_bias: TOWARD_CALLS,
      ...extra,
    });
    return (response.choices as Choice[])[0]!;
  };
  const out: Choice[] = [];
  for (let seed = 1; seed <= SAMPLES; seed += 2) out.push(...(await Promise.all([one(seed), one(seed + 1)])));
  return out;
}

/** The answers that are neither prose nor calls of the strict tools with valid arguments. */
function badAnswers(choices: Choice[]): string[] {
  return choices.flatMap((choice) => {
    const { content, tool_calls: calls } = choice.message;
    if (choice.finish_reason !== 'tool_calls')
      return BEGUN_CALLS.test(content ?? '') ? [`text: ${content}`] : [];
    return (calls ?? [])
      .filter((c) => !validators[c.function.name]?.(JSON.parse(c.function.arguments)))
      .map((c) => `call: ${c.function.name}(${c.function.arguments})`);
  });
}

describe('strict tools in tool_choice auto, on the random-weight model', { timeout: TIMEOUT_MS }, () => {
  test('behavior: every answer is prose or calls whose arguments hold to the parameters', async () => {
    const choices = await answers({ tools: [tool('forecast', forecast), tool('ping', empty)] });
    expect(badAnswers(choices)).toEqual([]);
    const called = choices.filter((c) => c.finish_reason === 'tool_calls');
    // Both forms came: the grammar left prose free and the calls whole.
    expect(called.length).toBeGreaterThanOrEqual(3);
    expect(called.length).toBeLessThanOrEqual(SAMPLES - 3);
  });

  test('behavior: streamed, a call comes as chunks of valid arguments too', async () => {
    // The first seed whose answer is calls (SAMPLES at most); the answers before it are prose.
    let deltas: Call[] = [];
    for (let seed = 1; seed <= SAMPLES && deltas.length === 0; seed++) {
      const chunks = await tiny.chunks('chat', {
        messages: [{ role: 'user', content: 'Forecast, please.' }],
        tools: [tool('forecast', forecast)],
        max_tokens: 160,
        temperature: 1.5,
        seed,
        logit_bias: TOWARD_CALLS,
      });
      type Delta = { content?: string; tool_calls?: Call[] };
      const delta = chunks.map((c) => (c.choices as { delta: Delta }[])[0]!.delta);
      deltas = delta.flatMap((d) => d.tool_calls ?? []);
      expect(BEGUN_CALLS.test(delta.map((d) => d.content ?? '').join(''))).toBe(false);
    }
    expect(deltas).toHaveLength(1);
    expect(validators.forecast!(JSON.parse(deltas[0]!.function.arguments))).toBe(true);
  });

  test('behavior: parallel_tool_calls false, a tool not strict beside a strict one: one call, any object for it', async () => {
    // A schema the grammar could not enforce: not strict, it is not compiled, so not refused.
    const loose = { type: 'object', properties: { site: { type: 'string', format: 'uri' } } };
    const choices = await answers({
      tools: [tool('forecast', forecast), tool('open', loose, false)],
      parallel_tool_calls: false,
    });
    const called = choices.filter((c) => c.finish_reason === 'tool_calls');
    expect(called.length).toBeGreaterThan(0);
    for (const choice of called) {
      expect(choice.message.tool_calls).toHaveLength(1);
      const { name, arguments: args } = choice.message.tool_calls![0]!.function;
      if (name === 'forecast') expect(validators.forecast!(JSON.parse(args)), args).toBe(true);
      else expect(name).toBe('open');
    }
    // An answer cut by max_tokens (a free object can run long) is the only text that begins calls.
    const begun = choices.filter(
      (c) => c.finish_reason !== 'tool_calls' && BEGUN_CALLS.test(c.message.content ?? ''),
    );
    expect(begun.every((c) => c.finish_reason === 'length')).toBe(true);
  });

  test('error: a strict tool whose parameters the grammar cannot enforce is refused in auto mode, naming where', async () => {
    const bad = { type: 'object', properties: { site: { type: 'string', format: 'uri' } } };
    await expect(
      tiny.whole('chat', {
        messages: [{ role: 'user', content: 'x' }],
        max_tokens: 8,
        tools: [tool('forecast', forecast), tool('open', bad)],
        tool_choice: 'auto',
      }),
    ).rejects.toMatchObject({
      code: 'invalid_request',
      message: expect.stringContaining("'tools.1.function.parameters.properties.site.format'"),
    });
  });
});
