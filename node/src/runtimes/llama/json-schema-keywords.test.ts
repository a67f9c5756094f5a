/**
 * Each JSON Schema keyword of OpenAI's strict structured outputs, held by the grammar on the
 * random-weight model (the harshest test of a grammar: it writes whatever the grammar lets through)
 * at temperature 1.5, every answer validated by ajv (JSON Schema 2020-12, ajv-formats' full mode).
 * Each case also says what node-llama-cpp's own JSON Schema grammar (the runtime's before) let
 * through. Keywords the grammar cannot enforce under `strict: true` are refused, naming them.
 */

import { jsonSchemaGrammar, SchemaKeywordError } from '@gpumesh/protocol/internal';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import fc from 'fast-check';
import { LlamaGrammarEvaluationState } from 'node-llama-cpp';
import { describe, expect, test } from 'vitest';
import type { JsonObject } from '../runtime.js';
import { NO_EOS, useTinyRuntime } from './tiny-runtime-fixture.js';

/** ajv-formats is CommonJS: its function is the default export's `default` under NodeNext types. */
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  ajv: Ajv2020,
) => void;

const tiny = useTinyRuntime();

const ajv = new Ajv2020({ strict: false, multipleOfPrecision: 9 });
addFormats(ajv);

/** Answers per keyword (two at a time: the runtime has two sequences). */
const SAMPLES = 8;

const object = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: 'object',
  properties,
  required: Object.keys(properties),
  additionalProperties: false,
  ...extra,
});

/** The schema per keyword, and what node-llama-cpp's grammar did with it. */
const CASES: Record<string, { schema: object; before: string }> = {
  'minLength/maxLength': {
    schema: object({ name: { type: 'string', minLength: 2, maxLength: 16 } }),
    before: 'counted bytes of invalid UTF-8 as characters: longer strings (LangChain: "Too big")',
  },
  pattern: { schema: object({ code: { type: 'string', pattern: '^[A-Z]{2}-\\d{3}$' } }), before: 'ignored' },
  format: {
    schema: object(
      Object.fromEntries(
        ['date-time', 'date', 'time', 'email', 'uuid', 'ipv4', 'ipv6', 'hostname'].map((f) => [
          f,
          { type: 'string', format: f },
        ]),
      ),
    ),
    before: 'email, uuid, ipv4, ipv6 and hostname ignored; 31 February allowed',
  },
  'minimum/maximum': {
    schema: object({
      lat: { type: 'number', minimum: -90, maximum: 60 },
      month: { type: 'integer', minimum: 1, maximum: 12 },
    }),
    before: 'ignored (the AI SDK: "response did not match schema")',
  },
  'exclusiveMinimum/exclusiveMaximum': {
    schema: object({ p: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 } }),
    before: 'ignored',
  },
  multipleOf: {
    schema: object({
      five: { type: 'integer', multipleOf: 5, minimum: 0, maximum: 100 },
      cents: { type: 'number', multipleOf: 0.01, minimum: 0, maximum: 1000 },
    }),
    before: 'ignored',
  },
  'minItems/maxItems': {
    schema: object({
      xs: { type: 'array', items: { type: 'number', minimum: 0, maximum: 1 }, minItems: 2, maxItems: 3 },
    }),
    before: 'the counts held, the items did not (numbers out of range, exponents to Infinity)',
  },
  enum: {
    schema: object({ e: { enum: ['a', { k: 1 }, [1, 2], null, 3.5] } }),
    before: 'refused an object or array value',
  },
  const: {
    schema: object({ c: { const: { k: [1, 'x'] } }, d: { const: 'fixed' } }),
    before: 'refused an object value',
  },
  anyOf: {
    schema: object({
      v: {
        anyOf: [
          { type: 'integer', minimum: 0, maximum: 9 },
          { type: 'string', maxLength: 2 },
        ],
      },
    }),
    before: 'wrote null for an anyOf',
  },
  '$defs/$ref (recursive)': {
    schema: {
      definitions: { leaf: { type: 'integer', minimum: 0, maximum: 9 } },
      ...object({
        v: { $ref: '#/definitions/leaf' },
        kids: { type: 'array', items: { $ref: '#' }, maxItems: 1 },
      }),
    },
    before: "any JSON for '#' and '#/definitions/…' references (zod-to-json-schema's)",
  },
  'additionalProperties: false, optional properties': {
    schema: {
      type: 'object',
      properties: {
        a: { type: 'boolean' },
        b: object({ n: { type: 'integer', maximum: 5 } }),
        c: { type: 'null' },
      },
      required: ['a'],
      additionalProperties: false,
    },
    before: 'every property written, a nested maximum ignored',
  },
  'nullable types': {
    schema: object({
      t: { type: ['integer', 'null'], minimum: 0, maximum: 9 },
      s: { type: 'string', nullable: true, maxLength: 3 },
    }),
    before: 'the bounds beside null ignored',
  },
};

/** `SAMPLES` answers to a JSON-schema response_format of `schema`, seeds 1…SAMPLES. */
async function answers(extra: JsonObject, maxTokens = 400): Promise<{ content: string; finish: string }[]> {
  const one = async (seed: number) => {
    const response = await tiny.whole('chat', {
      messages: [{ role: 'user', content: 'JSON, please.' }],
      max_tokens: maxTokens,
      temperature: 1.5,
      seed,
      ...extra,
    });
    const [choice] = response.choices as { message: { content: string }; finish_reason: string }[];
    return { content: choice!.message.content, finish: choice!.finish_reason };
  };
  const out: { content: string; finish: string }[] = [];
  for (let seed = 1; seed <= SAMPLES; seed += 2) out.push(...(await Promise.all([one(seed), one(seed + 1)])));
  return out;
}

describe('JSON Schema keywords on the random-weight model', () => {
  test.each(Object.keys(CASES))('behavior: %s — every answer validates', async (name) => {
    const { schema } = CASES[name]!;
    const validate = ajv.compile(schema);
    const format = { type: 'json_schema', json_schema: { name: 'out', strict: true, schema } };
    // Eight formats at their longest (a random model writes long addresses): room for all.
    const bad = (await answers({ response_format: format }, name === 'format' ? 1500 : 400)).filter(
      ({ content, finish }) => finish !== 'stop' || !validate(JSON.parse(content)),
    );
    expect(bad.map((b) => `${b.finish}: ${b.content}`)).toEqual([]);
  });

  test('behavior: a strict tool forced by tool_choice: its arguments hold to the parameters', async () => {
    const parameters = object({
      city: { type: 'string', maxLength: 8 },
      days: { type: 'integer', minimum: 1, maximum: 7 },
    });
    const validate = ajv.compile(parameters);
    const tools = [{ type: 'function', function: { name: 'forecast', strict: true, parameters } }];
    const call = async (seed: number) => {
      const response = (await tiny.whole('chat', {
        messages: [{ role: 'user', content: 'x' }],
        tools,
        tool_choice: seed % 2 ? 'required' : { type: 'function', function: { name: 'forecast' } },
        temperature: 1.5,
        seed,
        max_tokens: 300,
      })) as unknown as { choices: { message: { tool_calls: { function: { arguments: string } }[] } }[] };
      return JSON.parse(response.choices[0]!.message.tool_calls[0]!.function.arguments) as unknown;
    };
    const args: unknown[] = [];
    for (let seed = 1; seed <= SAMPLES; seed += 2)
      args.push(...(await Promise.all([call(seed), call(seed + 1)])));
    expect(args.filter((a) => !validate(a))).toEqual([]);
  });

  test('behavior: with end-of-sequence banned the grammar still ends the answer (no empty grammar stack)', async () => {
    const schema = object({ ok: { type: 'boolean' } });
    const [first] = await answers({
      response_format: { type: 'json_schema', json_schema: { name: 'out', schema } },
      logit_bias: NO_EOS,
    });
    expect(first!.finish).toBe('stop');
    expect(typeof JSON.parse(first!.content).ok).toBe('boolean');
  });

  test('error: strict, a keyword the grammar cannot enforce is invalid_request naming it; not strict, it is left out', async () => {
    const schema = object({ id: { type: 'string', format: 'uri' }, n: { type: 'integer', maximum: 3 } });
    const ask = (strict: boolean) =>
      tiny.whole('chat', {
        messages: [{ role: 'user', content: 'x' }],
        max_tokens: 200,
        seed: 1,
        response_format: { type: 'json_schema', json_schema: { name: 'out', strict, schema } },
      });
    await expect(ask(true)).rejects.toMatchObject({
      code: 'invalid_request',
      message: expect.stringContaining("'response_format.json_schema.schema.properties.id.format'"),
    });
    const loose = JSON.parse(
      ((await ask(false)).choices as { message: { content: string } }[])[0]!.message.content,
    );
    expect(loose.n).toBeLessThanOrEqual(3);
    // A strict tool is checked whether or not the call is forced.
    await expect(
      tiny.whole('chat', {
        messages: [{ role: 'user', content: 'x' }],
        max_tokens: 8,
        tools: [{ type: 'function', function: { name: 'f', strict: true, parameters: schema } }],
      }),
    ).rejects.toMatchObject({
      message: expect.stringContaining("'tools.0.function.parameters.properties.id.format'"),
    });
  });

  test('behavior: every grammar the compiler writes is one llama.cpp takes (random schemas)', async () => {
    const model = await tiny.llama.loadModel({ modelPath: tiny.modelPath });
    const keywords =
      'type enum const anyOf properties required additionalProperties items minItems maxItems minLength maxLength pattern format minimum maximum exclusiveMinimum multipleOf $ref'.split(
        ' ',
      );
    const schemas = fc.sample(
      fc.letrec((tie) => ({
        schema: fc.oneof(
          { depthSize: 'small' },
          fc.boolean(),
          fc.dictionary(
            fc.constantFrom(...keywords),
            fc.oneof(fc.jsonValue({ maxDepth: 2 }), tie('schema'), fc.array(tie('schema'), { maxLength: 3 })),
            {
              maxKeys: 4,
            },
          ),
        ),
      })).schema,
      { numRuns: 400, seed: 41 },
    );
    let compiled = 0;
    try {
      for (const schema of schemas) {
        let text: string;
        try {
          text = jsonSchemaGrammar(JSON.parse(JSON.stringify(schema)), { strict: false });
        } catch (error) {
          if (error instanceof SchemaKeywordError) continue;
          throw error;
        }
        const grammar = await tiny.llama.createGrammar({ grammar: text });
        // The evaluation state is where llama.cpp checks the rules (left recursion, undefined ones).
        new LlamaGrammarEvaluationState({ model, grammar });
        compiled++;
      }
    } finally {
      await model.dispose();
    }
    expect(compiled).toBeGreaterThan(100);
  });
});
