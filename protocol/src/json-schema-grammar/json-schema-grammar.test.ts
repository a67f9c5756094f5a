/**
 * The compiler whole: for a schema per keyword, random values of its grammar (every alternative and
 * repetition drawn at random, expr-testing.ts) validated by ajv; and what it cannot enforce, refused
 * under strict naming the keyword where it stands, left out otherwise.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { randomSource, sampleExpr } from './expr-testing.js';
import { JsonGrammarBuilder } from './json-grammar-builder.js';
import { jsonSchemaGrammar } from './json-schema-grammar.js';
import { SchemaKeywordError } from './schema-keyword-error.js';

/** ajv-formats is CommonJS: its function is the default export's `default` under NodeNext types. */
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  ajv: Ajv2020,
) => void;

// JSON Schema 2020-12 (prefixItems); ajv divides for multipleOf, hence its precision option.
const ajv = new Ajv2020({ strict: false, multipleOfPrecision: 9 });
addFormats(ajv);

const object = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: 'object',
  properties,
  required: Object.keys(properties),
  additionalProperties: false,
  ...extra,
});

/** A schema per keyword (and the shapes clients send): each value of its grammar must validate. */
const SCHEMAS: Record<string, unknown> = {
  'minLength/maxLength': object({ s: { type: 'string', minLength: 2, maxLength: 5 } }),
  pattern: object({ code: { type: 'string', pattern: '^[A-Z]{2}-\\d{3}$' } }),
  format: object({
    at: { type: 'string', format: 'date-time' },
    day: { type: 'string', format: 'date' },
    mail: { type: 'string', format: 'email' },
    id: { type: 'string', format: 'uuid' },
    v6: { type: 'string', format: 'ipv6' },
  }),
  'minimum/maximum': object({
    lat: { type: 'number', minimum: -90, maximum: 60 },
    n: { type: 'integer', minimum: 1, maximum: 12 },
  }),
  'exclusive bounds': object({ p: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 } }),
  multipleOf: object({
    k: { type: 'integer', multipleOf: 5, minimum: 0, maximum: 100 },
    c: { type: 'number', multipleOf: 0.01, minimum: -1000, maximum: 1000 },
  }),
  'minItems/maxItems': object({
    tags: { type: 'array', items: { type: 'string', maxLength: 3 }, minItems: 1, maxItems: 3 },
  }),
  'enum/const': object({ e: { enum: ['a', 'b', 3, null] }, c: { const: 'fixed' } }),
  anyOf: object({
    v: {
      anyOf: [
        { type: 'integer', minimum: 0, maximum: 9 },
        { type: 'string', maxLength: 2 },
      ],
    },
  }),
  'oneOf (disjoint)': {
    oneOf: [object({ kind: { const: 'a' }, x: { type: 'integer' } }), object({ kind: { const: 'b' } })],
  },
  'allOf merged': {
    allOf: [object({ a: { type: 'integer', minimum: 0 } }), { properties: { a: { maximum: 5 } } }],
  },
  '$defs/$ref (recursive)': {
    $defs: {
      node: object({ v: { type: 'integer' }, next: { anyOf: [{ $ref: '#/$defs/node' }, { type: 'null' }] } }),
    },
    $ref: '#/$defs/node',
  },
  'additionalProperties false, optional properties': {
    type: 'object',
    properties: { a: { type: 'boolean' }, b: { type: 'null' }, c: { type: 'string', maxLength: 1 } },
    required: ['b'],
    additionalProperties: false,
  },
  'nullable types': object({
    t: { type: ['string', 'null'], maxLength: 4 },
    o: { type: 'integer', nullable: true, maximum: 3 },
  }),
  'a map (additionalProperties schema)': {
    type: 'object',
    additionalProperties: { type: 'integer', maximum: 0 },
    maxProperties: 3,
  },
  'json_object (any object)': { type: 'object' },
  'a tuple (prefixItems)': {
    type: 'array',
    prefixItems: [{ type: 'string', format: 'ipv4' }, { type: 'boolean' }],
    items: false,
  },
};

/** Random values of `schema`'s grammar. */
function values(schema: unknown, n: number): unknown[] {
  const builder = new JsonGrammarBuilder();
  const root = builder.value(schema, { strict: true });
  const random = randomSource(7);
  return Array.from(
    { length: n },
    () => JSON.parse(sampleExpr(root, random, builder.rules, 4, 6)) as unknown,
  );
}

describe('jsonSchemaGrammar', () => {
  test.each(Object.keys(SCHEMAS))('default: %s — every value of the grammar validates', (name) => {
    const schema = SCHEMAS[name];
    const validate = ajv.compile(schema as object);
    const invalid = values(schema, 300).filter((v) => !validate(v));
    expect(invalid.slice(0, 3)).toEqual([]);
    // llama.cpp's GBNF: a root rule, each rule on its line.
    expect(jsonSchemaGrammar(schema, { strict: true })).toMatch(/^root ::= /);
  });

  test('behavior: properties come in the order the schema gives, optional ones left out or not', () => {
    const schema = SCHEMAS['additionalProperties false, optional properties'];
    const orders = new Set(values(schema, 300).map((v) => Object.keys(v as object).join(',')));
    expect([...orders].sort()).toEqual(['a,b', 'a,b,c', 'b', 'b,c']);
  });

  test('error: under strict, what the grammar cannot enforce is refused naming the keyword where it stands', () => {
    const refused: [unknown, string][] = [
      [object({ p: { type: 'string', pattern: '^(?!x)' } }), 'properties.p.pattern'],
      [object({ f: { type: 'string', format: 'uri' } }), 'properties.f.format'],
      [
        object({ l: { type: 'array', items: { type: 'integer' }, uniqueItems: true } }),
        'properties.l.uniqueItems',
      ],
      [{ type: 'object', patternProperties: { '^x': {} } }, 'patternProperties'],
      [{ not: { type: 'string' } }, 'not'],
      [{ oneOf: [{ type: 'string' }, { type: 'string', maxLength: 2 }] }, 'oneOf'],
      [object({ k: { type: 'integer', multipleOf: 3 } }), 'properties.k.multipleOf'],
      [
        { $defs: { n: { type: 'string', format: 'hostname', maxLength: 5 } }, $ref: '#/$defs/n' },
        '$defs.n.maxLength',
      ],
      [{ type: 'array', items: { if: { type: 'string' } } }, 'items.if'],
      [{ allOf: [{ type: 'string', pattern: 'a' }, { pattern: 'b' }] }, 'allOf'],
      [{ type: 'object', minProperties: 1 }, 'minProperties'],
    ];
    for (const [schema, param] of refused) {
      let error: SchemaKeywordError | undefined;
      try {
        jsonSchemaGrammar(schema, { strict: true });
      } catch (e) {
        error = e as SchemaKeywordError;
      }
      expect(error?.param, JSON.stringify(schema)).toBe(param);
      expect(error?.message).toContain(`'${param.split('.').at(-1)}'`);
      // Not strict: left out (OpenAI does not enforce a non-strict schema either), and said so.
      const left: string[] = [];
      expect(() =>
        jsonSchemaGrammar(schema, { strict: false, onLeftOut: (e) => left.push(e.param) }),
      ).not.toThrow();
      expect(left).toContain(param);
    }
  });

  test('error: a schema that is invalid or that no value satisfies is refused even when not strict', () => {
    const refused: [unknown, string][] = [
      [{ $ref: '#/$defs/missing' }, '$ref'],
      [{ $ref: 'https://example.com/schema.json' }, '$ref'],
      [{ $defs: { a: { $ref: '#/$defs/a' } }, $ref: '#/$defs/a' }, '$ref'],
      [object({ n: { type: 'integer', minimum: 5, maximum: 4 } }), 'properties.n.minimum'],
      [{ type: 'string', enum: [1, 2] }, 'enum'],
      [{ type: 'object', properties: {}, required: ['x'], additionalProperties: false }, 'required'],
      [{ type: 'strings' }, 'type'],
      [{ type: 'array', minItems: 2, maxItems: 1 }, 'minItems'],
    ];
    for (const [schema, param] of refused) {
      expect(() => jsonSchemaGrammar(schema, { strict: false }), JSON.stringify(schema)).toThrow(
        expect.objectContaining({ param }),
      );
    }
  });

  test('behavior: annotations, $schema and x- members are taken as they are', () => {
    const schema = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      title: 'T',
      description: 'd',
      'x-order': 1,
      ...object({ a: { type: 'string', default: 'x', examples: ['y'] } }),
    };
    expect(() => jsonSchemaGrammar(schema, { strict: true })).not.toThrow();
  });

  test('behavior: any JSON as a schema compiles or is a SchemaKeywordError, never another error (fuzz)', () => {
    const keywords = [
      ...'type enum const anyOf oneOf allOf $ref properties required additionalProperties items prefixItems minItems maxItems minLength maxLength pattern format minimum maximum exclusiveMinimum exclusiveMaximum multipleOf nullable $defs'.split(
        ' ',
      ),
    ];
    const { schema } = fc.letrec((tie) => ({
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
    }));
    fc.assert(
      fc.property(schema, fc.boolean(), (s, strict) => {
        try {
          // As a request body parses it (objects with prototypes).
          jsonSchemaGrammar(JSON.parse(JSON.stringify(s)), { strict });
        } catch (error) {
          if (!(error instanceof SchemaKeywordError)) throw error;
        }
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 2000), seed: Number(process.env.FUZZ_SEED ?? 41) },
    );
  });

  test('error: merged references that would multiply without end are refused, quickly', () => {
    // Each level refers to the next twice with a keyword beside: 2^40 compilations unguarded.
    const $defs: Record<string, unknown> = { d40: { type: 'string' } };
    for (let i = 39; i >= 0; i--) {
      const next = `#/$defs/d${i + 1}`;
      $defs[`d${i}`] = {
        anyOf: [
          { $ref: next, minLength: 1 },
          { $ref: next, maxLength: 9 },
        ],
      };
    }
    const started = performance.now();
    expect(() => jsonSchemaGrammar({ $defs, $ref: '#/$defs/d0' }, { strict: true })).toThrow(
      SchemaKeywordError,
    );
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});
