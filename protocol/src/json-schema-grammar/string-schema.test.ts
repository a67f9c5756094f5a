/**
 * String grammars: random strings of each (expr-testing.ts) parsed as JSON and checked by the
 * validators clients use — ajv with ajv-formats (full mode) and zod — and patterns by the regular
 * expression itself; what a pattern must not match, the grammar must not either.
 */
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { randomSource, sampleExpr, toRegExp } from './expr-testing.js';
import type { Enforcer } from './number-schema.js';
import { patternExpr } from './pattern-expr.js';
import { SchemaKeywordError } from './schema-keyword-error.js';
import { STRING_FORMATS } from './string-formats.js';
import { stringExpr } from './string-schema.js';

/** ajv-formats is CommonJS: its function is the default export's `default` under NodeNext types. */
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  ajv: Ajv,
) => void;

const strict: Enforcer = {
  cannot: (path, keyword, reason) => {
    throw new SchemaKeywordError(path, keyword, reason);
  },
  invalid: (path, keyword, reason) => {
    throw new SchemaKeywordError(path, keyword, reason);
  },
};

const ajv = new Ajv({ strict: false });
addFormats(ajv);

/** `n` random JSON strings of `schema`'s grammar, parsed. */
function samples(schema: Record<string, unknown>, n: number, seed = 1): string[] {
  const expr = stringExpr(schema, [], strict);
  const random = randomSource(seed);
  return Array.from({ length: n }, () => JSON.parse(sampleExpr(expr, random, new Map(), 12)) as string);
}

/**
 * Zod's own check of each format, as a client's schema would run it. Not `time`: zod's `.time()`
 * takes no time zone, JSON Schema's (RFC 3339's full-time) requires one — the grammar writes `Z`.
 */
const ZOD: Record<string, z.ZodType> = {
  'date-time': z.string().datetime(),
  date: z.string().date(),
  email: z.string().email(),
  uuid: z.string().uuid(),
  ipv4: z.string().ip({ version: 'v4' }),
  ipv6: z.string().ip({ version: 'v6' }),
};

describe('string formats', () => {
  test.each(STRING_FORMATS)(
    'default: %s — every string written is valid for ajv-formats and zod',
    (format) => {
      const validate = ajv.compile({ type: 'string', format });
      const bad = samples({ type: 'string', format }, 1500).filter(
        (s) => !validate(s) || (ZOD[format] && !ZOD[format].safeParse(s).success),
      );
      expect(bad.slice(0, 5)).toEqual([]);
    },
  );

  test('behavior: 29 February only in leap years (2000 yes, 1900 no)', () => {
    const date = toRegExp(stringExpr({ type: 'string', format: 'date' }, [], strict));
    const dates = [
      '"2024-02-29"',
      '"2000-02-29"',
      '"1900-02-29"',
      '"2023-02-29"',
      '"2023-04-31"',
      '"2023-13-01"',
    ];
    expect(dates.map((d) => date.test(d))).toEqual([true, true, false, false, false, false]);
  });
});

describe('minLength and maxLength', () => {
  test('default: lengths count characters of the parsed string, an escape one character', () => {
    for (const [min, max] of [
      [0, 16],
      [3, 5],
      [7, 7],
    ] as const) {
      const lengths = samples({ type: 'string', minLength: min, maxLength: max }, 400).map((s) => s.length);
      expect(Math.min(...lengths)).toBeGreaterThanOrEqual(min);
      expect(Math.max(...lengths)).toBeLessThanOrEqual(max);
    }
    // Escapes are written and counted as one: a quote, a backslash, a newline.
    const written = samples({ type: 'string', minLength: 30, maxLength: 30 }, 200).join('');
    expect(written).toMatch(/["\\\n]/);
    // zod counts UTF-16 units: characters above the BMP are never written in a bounded string.
    expect(
      samples({ type: 'string', maxLength: 16 }, 300).every((s) => z.string().max(16).safeParse(s).success),
    ).toBe(true);
  });

  test("behavior: a counted string's characters leave llama.cpp's lenient UTF-8 decoding nothing to let through", () => {
    // Lead byte 0xE0 spells U+0800–U+0FFF; after it llama.cpp takes 0x80–0x9F, an overlong two-byte
    // character (three U+FFFD in JavaScript). Lead bytes 0xF0–0xFF spell what is above U+FFFF.
    const written = samples({ type: 'string', maxLength: 40 }, 500).join('');
    expect([...written].filter((c) => c.codePointAt(0)! >= 0x800 && c.codePointAt(0)! <= 0xfff)).toEqual([]);
    expect([...written].filter((c) => c.codePointAt(0)! > 0xffff)).toEqual([]);
    expect(written).toMatch(/[\u00a0-\u07ff]/);
    expect(() => stringExpr({ type: 'string', pattern: '^😀+$' }, [], strict)).toThrow(
      expect.objectContaining({ param: 'pattern' }),
    );
  });

  test('behavior: a pattern narrowed to the length bounds', () => {
    const words = samples({ type: 'string', pattern: '^[a-z]+$', maxLength: 8 }, 300);
    expect(words.every((w) => /^[a-z]{1,8}$/.test(w))).toBe(true);
    const codes = samples({ type: 'string', pattern: '^ID-\\d*$', minLength: 5, maxLength: 6 }, 300);
    expect(codes.every((w) => /^ID-\d{2,3}$/.test(w))).toBe(true);
  });
});

const PATTERNS = [
  '^[A-Z]{2}-\\d{3,5}$',
  '^(foo|bar)+baz?$',
  '^\\w+@\\w+\\.com$',
  '^[^aeiou\\s]{2,4}$',
  '^\\+?[0-9]{1,3}(?:[ -][0-9]{2,4}){2}$',
  '^(?<year>\\d{4})-(0[1-9]|1[0-2])$',
  '^a.c\\.d\\x41\\u00e9[\\d\\-_]$',
  'abc',
  '^start|end$',
  '^[\\[\\]"\\\\]{3}$',
];

describe('pattern', () => {
  test.each(PATTERNS)('default: %s — every string written matches', (pattern) => {
    const re = new RegExp(pattern, 'u');
    const bad = samples({ type: 'string', pattern }, 500).filter((s) => !re.test(s));
    expect(bad.slice(0, 5)).toEqual([]);
  });

  test('behavior: what the pattern refuses, the grammar refuses', () => {
    const cases: [string, string[]][] = [
      ['^[A-Z]{2}-\\d{3,5}$', ['AB-12', 'ab-123', 'AB-123456', 'ABC-123']],
      ['^(foo|bar)+baz?$', ['foobazz', 'ba', 'foox']],
      ['^[^aeiou\\s]{2,4}$', ['ab', 'x y', 'xxxxx']],
    ];
    for (const [pattern, refused] of cases) {
      const re = toRegExp(patternExpr(pattern));
      expect(refused.filter((s) => re.test(s))).toEqual([]);
    }
  });

  test('error: lookaround, backreferences, word boundaries and property escapes are refused naming pattern', () => {
    for (const pattern of ['^(?=a)a$', '(a)\\1', '\\bword\\b', '^\\p{L}+$', '^(a|^b)$', '(']) {
      expect(() => stringExpr({ type: 'string', pattern }, ['properties', 'code'], strict), pattern).toThrow(
        expect.objectContaining({ param: 'properties.code.pattern' }),
      );
    }
  });

  test('error: a length with an open pattern, a pattern with a format, an unknown format', () => {
    const at = (schema: Record<string, unknown>) => {
      try {
        stringExpr({ type: 'string', ...schema }, [], strict);
      } catch (error) {
        return (error as SchemaKeywordError).param;
      }
      return 'enforced';
    };
    expect(at({ pattern: 'x', maxLength: 5 })).toBe('maxLength');
    expect(at({ format: 'email', pattern: '^a' })).toBe('pattern');
    expect(at({ format: 'uri' })).toBe('format');
    expect(at({ format: 'uuid', maxLength: 36 })).toBe('enforced');
    expect(at({ format: 'uuid', maxLength: 10 })).toBe('maxLength');
    expect(at({ minLength: 4, maxLength: 3 })).toBe('minLength');
  });
});
