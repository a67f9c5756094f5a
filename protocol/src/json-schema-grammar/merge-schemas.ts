/**
 * Two schemas as one that allows what both allow, for `allOf` and for keywords beside `anyOf`,
 * `oneOf` or `$ref`: bounds tighten, `required` and `properties` join (a property in both becomes
 * the `allOf` of its two schemas), types and enums intersect. Keywords that do not combine so
 * (two different patterns, formats, anyOfs, …) throw MergeConflict naming the keyword.
 */
import { isAnnotation } from './schema-keyword-error.js';

type Schema = Readonly<Record<string, unknown>>;

export class MergeConflict extends Error {
  constructor(readonly keyword: string) {
    super(`the schemas disagree on '${keyword}'`);
  }
}

const LOWER_BOUNDS = new Set(['minimum', 'exclusiveMinimum', 'minLength', 'minItems', 'minProperties']);
const UPPER_BOUNDS = new Set(['maximum', 'exclusiveMaximum', 'maxLength', 'maxItems', 'maxProperties']);

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);
const both = (a: unknown, b: unknown): unknown => ({ allOf: [a, b] });

/** A sub-schema in both: false if either is, the other if one is true, else both as an allOf. */
function mergeSub(a: unknown, b: unknown): unknown {
  if (a === false || b === false) return false;
  if (a === true) return b;
  if (b === true) return a;
  return both(a, b);
}

const typesOf = (t: unknown): string[] => (Array.isArray(t) ? (t as string[]) : [t as string]);

export function mergeSchemas(a: Schema, b: Schema): Schema {
  const out: Record<string, unknown> = { ...a };
  for (const [key, value] of Object.entries(b)) {
    if (!(key in out) || same(out[key], value)) {
      out[key] = value;
      continue;
    }
    const mine = out[key];
    if (isAnnotation(key)) continue;
    if (LOWER_BOUNDS.has(key) && typeof mine === 'number' && typeof value === 'number') {
      out[key] = Math.max(mine, value);
    } else if (UPPER_BOUNDS.has(key) && typeof mine === 'number' && typeof value === 'number') {
      out[key] = Math.min(mine, value);
    } else if (key === 'required' && Array.isArray(mine) && Array.isArray(value)) {
      out[key] = [...new Set([...mine, ...value])];
    } else if (key === 'type') {
      const theirs = typesOf(value);
      const common = typesOf(mine).flatMap((t) =>
        theirs.includes(t)
          ? [t]
          : t === 'number' && theirs.includes('integer')
            ? ['integer']
            : t === 'integer' && theirs.includes('number')
              ? ['integer']
              : [],
      );
      if (common.length === 0) throw new MergeConflict('type');
      out[key] = common.length === 1 ? common[0] : common;
    } else if (key === 'enum' && Array.isArray(mine) && Array.isArray(value)) {
      out[key] = mine.filter((m) => value.some((v) => same(m, v)));
    } else if (key === 'allOf' && Array.isArray(mine) && Array.isArray(value)) {
      out[key] = [...mine, ...value];
    } else if (key === 'properties' && typeof mine === 'object' && typeof value === 'object') {
      const props: Record<string, unknown> = { ...(mine as Schema) };
      for (const [name, sub] of Object.entries(value as Schema))
        props[name] = name in props && !same(props[name], sub) ? mergeSub(props[name], sub) : sub;
      out[key] = props;
    } else if (key === 'items' || key === 'additionalProperties' || key === 'additionalItems') {
      if (Array.isArray(mine) || Array.isArray(value)) throw new MergeConflict(key);
      out[key] = mergeSub(mine, value);
    } else {
      throw new MergeConflict(key);
    }
  }
  return out;
}
