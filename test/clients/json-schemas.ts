/**
 * JSON Schema keywords through the coordinator: what the nodes' grammar cannot enforce under
 * `strict: true` is the coordinator's 400 before routing, naming the keyword where it stands — for
 * chat's response_format and tools, the Responses API's text.format and tools, and /api/v1 — and an
 * enforced one reaches the node and holds, a strict tool's arguments in tool_choice auto too.
 * Registered by clients.test.ts, on its network.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { describe, expect, test } from 'vitest';
import type { ClientsNetwork } from '../support/clients-network.js';

/** ajv-formats is CommonJS: its function is the default export's `default` under NodeNext types. */
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  ajv: Ajv2020,
) => void;

type ErrorOut = { error: { message: string; code: unknown; param: string | null; type?: string } };

const object = (properties: Record<string, unknown>) => ({
  type: 'object',
  properties,
  required: Object.keys(properties),
  additionalProperties: false,
});

/** A property schema the grammar cannot enforce, and the keyword the 400 names. */
const REFUSED: [string, Record<string, unknown>][] = [
  ['pattern', { type: 'string', pattern: '^(?=.*[0-9]).{8,}$' }],
  ['format', { type: 'string', format: 'uri' }],
  ['maxLength', { type: 'string', pattern: 'x', maxLength: 8 }],
  ['multipleOf', { type: 'integer', multipleOf: 3 }],
  ['uniqueItems', { type: 'array', items: { type: 'integer' }, uniqueItems: true }],
  ['oneOf', { oneOf: [{ type: 'string' }, { type: 'string', maxLength: 2 }] }],
  ['not', { not: { type: 'null' } }],
  ['patternProperties', { type: 'object', patternProperties: { '^x': { type: 'string' } } }],
  ['$ref', { $ref: 'https://example.com/schema.json' }],
];

export function jsonSchemaTests(net: ClientsNetwork): void {
  const post = async (url: string, body: Record<string, unknown>) => {
    const res = await fetch(`${net.base}${url}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${net.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: net.model, ...body }),
    });
    return { status: res.status, body: (await res.json()) as ErrorOut & Record<string, unknown> };
  };
  const messages = [{ role: 'user', content: 'JSON, please.' }];

  describe('JSON Schema keywords through the coordinator', () => {
    test.each(REFUSED)(
      "error: strict, '%s' the grammar cannot enforce is a 400 naming it",
      async (keyword, bad) => {
        const schema = object({ ok: { type: 'boolean' }, x: bad });
        const { status, body } = await post('/v1/chat/completions', {
          messages,
          response_format: { type: 'json_schema', json_schema: { name: 'out', strict: true, schema } },
        });
        expect(status).toBe(400);
        expect(body.error).toMatchObject({
          code: 'invalid_request',
          param: `response_format.json_schema.schema.properties.x.${keyword}`,
        });
        expect(body.error.message).toContain(`'${keyword}'`);
      },
    );

    test('error: strict tools (chat and responses), completions and the Responses API text.format name the keyword as their API does', async () => {
      const parameters = object({ site: { type: 'string', format: 'uri' } });
      const cases: [string, Record<string, unknown>, string][] = [
        [
          '/v1/chat/completions',
          { messages, tools: [{ type: 'function', function: { name: 'open', strict: true, parameters } }] },
          'tools.0.function.parameters.properties.site.format',
        ],
        [
          '/v1/completions',
          {
            prompt: 'Hi',
            response_format: {
              type: 'json_schema',
              json_schema: { name: 'o', strict: true, schema: parameters },
            },
          },
          'response_format.json_schema.schema.properties.site.format',
        ],
        [
          '/v1/responses',
          { input: 'Hi', tools: [{ type: 'function', name: 'open', strict: true, parameters }] },
          'tools.0.parameters.properties.site.format',
        ],
        [
          '/v1/responses',
          {
            input: 'Hi',
            text: { format: { type: 'json_schema', name: 'out', strict: true, schema: parameters } },
          },
          'text.format.schema.properties.site.format',
        ],
      ];
      for (const [url, body, param] of cases) {
        const res = await post(url, body);
        expect(res.status, param).toBe(400);
        expect(res.body.error).toMatchObject({ code: 'invalid_request', param });
      }
      // OpenRouter's base URL: its error shape, the same refusal.
      const routed = await post('/api/v1/chat/completions', cases[0]![1]);
      expect(routed.status).toBe(400);
      expect(routed.body.error.message).toContain("'format'");
    });

    test('behavior: not strict, the keyword is left out and the answer comes; an invalid schema is a 400 either way', async () => {
      const schema = object({ site: { type: 'string', format: 'uri', maxLength: 12 } });
      const loose = await post('/v1/chat/completions', {
        messages,
        max_tokens: 64,
        seed: 1,
        response_format: { type: 'json_schema', json_schema: { name: 'out', schema } },
      });
      expect(loose.status).toBe(200);
      const content = (loose.body.choices as { message: { content: string } }[])[0]!.message.content;
      expect((JSON.parse(content) as { site: string }).site.length).toBeLessThanOrEqual(12);
      const unsatisfiable = await post('/v1/chat/completions', {
        messages,
        response_format: {
          type: 'json_schema',
          json_schema: { name: 'out', schema: object({ n: { type: 'integer', minimum: 5, maximum: 4 } }) },
        },
      });
      expect(unsatisfiable.status).toBe(400);
      expect(unsatisfiable.body.error.param).toBe('response_format.json_schema.schema.properties.n.minimum');
    });

    test('behavior: an enforced strict schema answers through the network, every keyword held', async () => {
      const schema = object({
        name: { type: 'string', minLength: 1, maxLength: 16 },
        lat: { type: 'number', minimum: -90, maximum: 60 },
        day: { type: 'string', format: 'date' },
        tags: { type: 'array', items: { enum: ['a', 'b'] }, minItems: 1, maxItems: 2 },
        note: { anyOf: [{ type: 'string', pattern: '^[a-z]{1,4}$' }, { type: 'null' }] },
      });
      const ajv = new Ajv2020({ strict: false });
      addFormats(ajv);
      const validate = ajv.compile(schema);
      for (const seed of [1, 2, 3]) {
        const { status, body } = await post('/v1/chat/completions', {
          messages,
          max_tokens: 300,
          temperature: 1.5,
          seed,
          response_format: { type: 'json_schema', json_schema: { name: 'out', strict: true, schema } },
        });
        expect(status).toBe(200);
        const content = (body.choices as { message: { content: string } }[])[0]!.message.content;
        expect(validate(JSON.parse(content)), content).toBe(true);
      }
    });

    test('behavior: a strict tool in tool_choice auto: every answer is prose or calls whose arguments hold', async () => {
      const parameters = object({
        city: { type: 'string', maxLength: 6 },
        days: { type: 'integer', minimum: 1, maximum: 7 },
        unit: { enum: ['c', 'f'] },
      });
      const validate = new Ajv2020({ strict: false }).compile(parameters);
      type Choice = {
        message: { content: string | null; tool_calls?: { function: { name: string; arguments: string } }[] };
        finish_reason: string;
      };
      let calls = 0;
      for (let seed = 1; seed <= 8; seed++) {
        const { status, body } = await post('/v1/chat/completions', {
          messages: [{ role: 'user', content: 'Forecast, please.' }],
          tools: [{ type: 'function', function: { name: 'forecast', strict: true, parameters } }],
          tool_choice: 'auto',
          max_tokens: 120,
          temperature: 1.5,
          seed,
          // The random model's `[` byte token and `{`: answers begin `[{`, calls, often (the node's
          // strict-auto-tools.test.ts); without the grammar they were text.
          logit_bias: { '94': 30, '350': 30 },
        });
        expect(status).toBe(200);
        const choice = (body.choices as Choice[])[0]!;
        if (choice.finish_reason !== 'tool_calls') {
          expect(choice.message.content, 'prose').not.toMatch(/^\s*\[\s*\{/);
          continue;
        }
        for (const call of choice.message.tool_calls!) {
          calls++;
          expect(call.function.name).toBe('forecast');
          expect(validate(JSON.parse(call.function.arguments)), call.function.arguments).toBe(true);
        }
      }
      expect(calls).toBeGreaterThan(0);
    });
  });
}
