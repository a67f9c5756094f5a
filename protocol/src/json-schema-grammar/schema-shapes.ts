/**
 * What the compiler reads off a schema before compiling it: its types (given, or told by its
 * keywords), where a `$ref` points, whether `oneOf`'s branches can overlap, and whether the rules
 * made of `$ref`s loop without reading a character (which llama.cpp refuses).
 */
import type { Expr } from './expr.js';
import type { Enforcer } from './number-schema.js';
import type { SchemaPath } from './schema-keyword-error.js';

type Schema = Readonly<Record<string, unknown>>;

export const JSON_TYPES: readonly string[] = [
  'null',
  'boolean',
  'object',
  'array',
  'number',
  'integer',
  'string',
];

/** Keywords that apply to one type only: a schema without `type` is of the types its keywords speak of. */
const TYPE_KEYWORDS: Readonly<Record<string, readonly string[]>> = {
  string: ['minLength', 'maxLength', 'pattern', 'format'],
  number: ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'],
  array: ['items', 'prefixItems', 'additionalItems', 'minItems', 'maxItems', 'uniqueItems'],
  object: ['properties', 'required', 'additionalProperties', 'minProperties', 'maxProperties'],
};

/**
 * The types `schema` allows — `type` (one or a list), `null` added by OpenAPI's `nullable: true` —
 * or, without `type`, those its keywords speak of (writing only those is still valid); undefined
 * when nothing narrows it (any JSON value).
 */
export function typesOf(schema: Schema, path: SchemaPath, e: Enforcer): string[] | undefined {
  let types: string[];
  if (schema.type !== undefined) {
    const given: unknown[] = Array.isArray(schema.type) ? schema.type : [schema.type];
    types = given.map((t) => (typeof t === 'string' ? t : ''));
    if (types.length === 0 || types.some((t) => !JSON_TYPES.includes(t)))
      e.invalid(path, 'type', `must be one of ${JSON_TYPES.join(', ')} or a list of them.`);
  } else {
    types = Object.entries(TYPE_KEYWORDS).flatMap(([type, keys]) =>
      keys.some((k) => k in schema) ? [type] : [],
    );
    if (types.length === 0 && schema.nullable !== true) return undefined;
    if (types.length === 0) return undefined;
  }
  if (schema.nullable === true && !types.includes('null')) types.push('null');
  if (types.includes('number')) types = types.filter((t) => t !== 'integer');
  return [...new Set(types)];
}

/** The sub-schema a local `$ref` (`#`, `#/$defs/x`, any JSON pointer) points to, and its path. */
export function resolvePointer(
  root: unknown,
  ref: string,
): { schema: unknown; path: SchemaPath } | undefined {
  if (!ref.startsWith('#')) return undefined;
  let fragment: string;
  try {
    fragment = decodeURIComponent(ref.slice(1));
  } catch {
    return undefined;
  }
  if (fragment === '') return { schema: root, path: [] };
  if (!fragment.startsWith('/')) return undefined;
  const path = fragment
    .slice(1)
    .split('/')
    .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
  let at: unknown = root;
  for (const segment of path) {
    if (typeof at !== 'object' || at === null || !Object.hasOwn(at, segment)) return undefined;
    at = (at as Record<string, unknown>)[segment];
  }
  return { schema: at, path };
}

/** The JSON types a (resolved) branch can have, or undefined when it can't be told. */
function branchTypes(branch: unknown): string[] | undefined {
  if (typeof branch !== 'object' || branch === null) return undefined;
  const s = branch as Schema;
  const typeOfValue = (v: unknown) =>
    v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'number' ? 'number' : typeof v;
  if (s.const !== undefined) return [typeOfValue(s.const)];
  if (Array.isArray(s.enum)) return [...new Set(s.enum.map(typeOfValue))];
  if (s.type === undefined) return undefined;
  const types = (Array.isArray(s.type) ? s.type : [s.type]).map((t) =>
    t === 'integer' ? 'number' : typeof t === 'string' ? t : '',
  );
  return s.nullable === true ? [...types, 'null'] : types;
}

/** The value each object branch must have at `key` (a required const or one-value enum). */
function tagOf(branch: unknown, key: string): string | undefined {
  const s = branch as Schema;
  const properties = s.properties as Record<string, Schema> | undefined;
  const required = Array.isArray(s.required) ? (s.required as string[]) : [];
  const p = properties?.[key];
  if (!p || !required.includes(key)) return undefined;
  if (p.const !== undefined) return JSON.stringify(p.const);
  if (Array.isArray(p.enum) && p.enum.length === 1) return JSON.stringify(p.enum[0]);
  return undefined;
}

/**
 * Whether no value can match two of `branches` (so `oneOf` is `anyOf`): their types are disjoint,
 * or they are objects with a required property whose const value differs in each.
 */
export function disjointBranches(branches: readonly unknown[]): boolean {
  const types = branches.map(branchTypes);
  if (types.every((t) => t !== undefined)) {
    const all = types.flat() as string[];
    if (new Set(all).size === all.length) return true;
  }
  const first = branches[0] as Schema | undefined;
  const keys = Object.keys((first?.properties as Schema | undefined) ?? {});
  return keys.some((key) => {
    const tags = branches.map((b) => (typeof b === 'object' && b !== null ? tagOf(b, key) : undefined));
    return tags.every((t) => t !== undefined) && new Set(tags).size === tags.length;
  });
}

/** A rule that reaches itself before reading any character, if one does (llama.cpp refuses those). */
export function findLeftRecursion(rules: ReadonlyMap<string, Expr>): string | undefined {
  const nullable = (x: Expr, seen: Set<string>): boolean => {
    switch (x.k) {
      case 'lit':
        return x.s === '';
      case 'cls':
        return false;
      case 'rep':
        return x.min === 0 || nullable(x.x, seen);
      case 'seq':
        return x.xs.every((y) => nullable(y, seen));
      case 'alt':
        return x.xs.some((y) => nullable(y, seen));
      case 'ref': {
        if (seen.has(x.name)) return false;
        const body = rules.get(x.name);
        return body !== undefined && nullable(body, new Set([...seen, x.name]));
      }
    }
  };
  /** Rules `x` may begin with. */
  const leading = (x: Expr, out: Set<string>): void => {
    if (x.k === 'ref') out.add(x.name);
    else if (x.k === 'rep') leading(x.x, out);
    else if (x.k === 'alt') for (const y of x.xs) leading(y, out);
    else if (x.k === 'seq') {
      for (const y of x.xs) {
        leading(y, out);
        if (!nullable(y, new Set())) break;
      }
    }
  };
  for (const name of rules.keys()) {
    const reached = new Set<string>();
    const queue = [name];
    while (queue.length > 0) {
      const next = new Set<string>();
      leading(rules.get(queue.pop()!)!, next);
      for (const n of next) {
        if (n === name) return name;
        if (!reached.has(n) && rules.has(n)) {
          reached.add(n);
          queue.push(n);
        }
      }
    }
  }
  return undefined;
}
