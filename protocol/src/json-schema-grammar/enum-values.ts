/**
 * `enum` and `const` with other keywords beside them: the values listed that satisfy those too
 * (type, string, number, array and object keywords, nested ones included), each then written as
 * its JSON. A value is kept only when it surely fits (a format is checked against the strings the
 * grammar would write for it), so what is written always satisfies the whole schema.
 */
import { toDecimal } from './decimal.js';
import { toRegExp } from './expr-regexp.js';
import { formatExpr } from './string-formats.js';

type Schema = Readonly<Record<string, unknown>>;

const jsonType = (v: unknown): string =>
  v === null
    ? 'null'
    : Array.isArray(v)
      ? 'array'
      : typeof v === 'number'
        ? Number.isInteger(v)
          ? 'integer'
          : 'number'
        : typeof v;

/** Whether `value` is a multiple of `step`, exactly (in decimals: 0.3 is a multiple of 0.1). */
function isMultiple(value: number, step: number): boolean {
  const v = toDecimal(value);
  const s = toDecimal(step);
  const places = Math.max(v.frac.length, s.frac.length);
  const scaled = (d: typeof v) => BigInt(d.int.toString() + d.frac.padEnd(places, '0'));
  return scaled(s) !== 0n && scaled(v) % scaled(s) === 0n;
}

/** Whether `value` matches `pattern` (an invalid pattern matches nothing). */
function matches(pattern: unknown, value: string): boolean {
  try {
    return typeof pattern === 'string' && new RegExp(pattern, 'u').test(value);
  } catch {
    return false;
  }
}

/** Whether `value` satisfies `schema`'s keywords (a `$ref` or combinator inside: not surely, so no). */
export function valueFits(value: unknown, schema: unknown): boolean {
  if (schema === true || schema === undefined) return true;
  if (typeof schema !== 'object' || schema === null) return false;
  const s = schema as Schema;
  if (s.$ref !== undefined || s.anyOf !== undefined || s.oneOf !== undefined || s.allOf !== undefined)
    return false;
  const type = jsonType(value);
  if (s.type !== undefined) {
    const types = (Array.isArray(s.type) ? s.type : [s.type]) as string[];
    const ok = types.includes(type) || (type === 'integer' && types.includes('number'));
    if (!ok && !(value === null && s.nullable === true)) return false;
  }
  if (
    s.enum !== undefined &&
    !(Array.isArray(s.enum) && s.enum.some((v) => JSON.stringify(v) === JSON.stringify(value)))
  )
    return false;
  if (s.const !== undefined && JSON.stringify(s.const) !== JSON.stringify(value)) return false;
  const num = (key: string) => (typeof s[key] === 'number' ? (s[key] as number) : undefined);
  if (typeof value === 'string') {
    const length = [...value].length;
    if (length < (num('minLength') ?? 0) || length > (num('maxLength') ?? Number.POSITIVE_INFINITY))
      return false;
    if (s.pattern !== undefined && !matches(s.pattern, value)) return false;
    if (s.format !== undefined) {
      const format = typeof s.format === 'string' ? formatExpr(s.format) : undefined;
      if (!format || !toRegExp(format).test(value)) return false;
    }
  }
  if (typeof value === 'number') {
    const min = num('minimum');
    const max = num('maximum');
    const exMin = s.exclusiveMinimum === true ? min : num('exclusiveMinimum');
    const exMax = s.exclusiveMaximum === true ? max : num('exclusiveMaximum');
    if ((min !== undefined && value < min) || (max !== undefined && value > max)) return false;
    if ((exMin !== undefined && value <= exMin) || (exMax !== undefined && value >= exMax)) return false;
    if (num('multipleOf') !== undefined && !isMultiple(value, num('multipleOf')!)) return false;
  }
  if (Array.isArray(value)) {
    if (value.length < (num('minItems') ?? 0) || value.length > (num('maxItems') ?? Number.POSITIVE_INFINITY))
      return false;
    if (s.uniqueItems === true && new Set(value.map((v) => JSON.stringify(v))).size < value.length)
      return false;
    const tuple = (
      Array.isArray(s.prefixItems) ? s.prefixItems : Array.isArray(s.items) ? s.items : []
    ) as unknown[];
    const rest = Array.isArray(s.items)
      ? s.additionalItems
      : Array.isArray(s.prefixItems)
        ? s.items
        : s.items;
    if (!value.every((v, i) => valueFits(v, i < tuple.length ? tuple[i] : rest))) return false;
  }
  if (type === 'object') {
    const object = value as Record<string, unknown>;
    const keys = Object.keys(object);
    if (
      keys.length < (num('minProperties') ?? 0) ||
      keys.length > (num('maxProperties') ?? Number.POSITIVE_INFINITY)
    )
      return false;
    if (
      Array.isArray(s.required) &&
      !s.required.every((k) => typeof k === 'string' && Object.hasOwn(object, k))
    )
      return false;
    const properties = (s.properties ?? {}) as Record<string, unknown>;
    for (const key of keys) {
      const own = Object.hasOwn(properties, key);
      if (!valueFits(object[key], own ? properties[key] : (s.additionalProperties ?? true))) return false;
    }
  }
  return true;
}
