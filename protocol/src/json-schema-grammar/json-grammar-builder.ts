/**
 * JSON Schema → llama.cpp grammar. Every keyword OpenAI's strict structured outputs accept is
 * enforced (see the README's table), or — for a strict schema — refused with a SchemaKeywordError
 * naming it and where it stands; a schema that is not strict has the keywords the grammar cannot
 * enforce left out, as OpenAI gives no guarantee on one either. A builder may compile several
 * documents into one grammar (a forced tool call: one per function), each with its own `$ref`s.
 */
import { ANY_TEXT } from './char-set.js';
import { arrayExpr, type Member, mapExpr, objectExpr } from './container-exprs.js';
import { decimalRange } from './decimal-range.js';
import { valueFits } from './enum-values.js';
import { alt, cls, type Expr, lit, NEVER, ref, rep } from './expr.js';
import { writeGbnf } from './gbnf-text.js';
import { jsonString } from './json-string.js';
import { MergeConflict, mergeSchemas } from './merge-schemas.js';
import { type Enforcer, MAX_FRACTION_DIGITS, MAX_INTEGER_DIGITS, numberExpr } from './number-schema.js';
import {
  ENFORCED_KEYWORDS,
  isAnnotation,
  SchemaKeywordError,
  type SchemaPath,
} from './schema-keyword-error.js';
import { disjointBranches, findLeftRecursion, resolvePointer, typesOf } from './schema-shapes.js';
import { stringExpr } from './string-schema.js';

/** How a schema is compiled. */
export type SchemaGrammarOptions = {
  /** OpenAI's `strict: true`: a keyword the grammar cannot enforce is an error, never left out. */
  readonly strict: boolean;
  /** Told each keyword left out (not strict). */
  readonly onLeftOut?: (error: SchemaKeywordError) => void;
};

/** Nesting of sub-schemas at most (a deeper schema is refused rather than overflowing the stack). */
export const MAX_SCHEMA_DEPTH = 64;
/** Sub-schemas compiled for one document at most: merged `$ref`s could otherwise multiply them. */
export const MAX_SCHEMA_NODES = 10_000;
/** Items an array's maxItems may ask for at most (minItems likewise). */
export const MAX_ARRAY_ITEMS = 10_000;

type Schema = Readonly<Record<string, unknown>>;
type Doc = {
  readonly root: unknown;
  readonly e: Enforcer;
  readonly refs: Map<string, string>;
  /** Sub-schemas it may still compile (MAX_SCHEMA_NODES). */
  left: number;
};

const isSchemaObject = (x: unknown): x is Schema => typeof x === 'object' && x !== null && !Array.isArray(x);

export class JsonGrammarBuilder {
  readonly #rules = new Map<string, Expr>();
  readonly #ruleSites = new Map<string, SchemaPath>();
  #anyValue: Expr | undefined;

  /** The JSON values `schema` allows, as an expression of this builder's grammar. */
  value(schema: unknown, options: SchemaGrammarOptions): Expr {
    const e: Enforcer = {
      cannot(path, keyword, reason) {
        const error = new SchemaKeywordError(path, keyword, reason);
        if (options.strict) throw error;
        options.onLeftOut?.(error);
      },
      invalid(path, keyword, reason) {
        throw new SchemaKeywordError(path, keyword, reason);
      },
    };
    return this.#compile({ root: schema, e, refs: new Map(), left: MAX_SCHEMA_NODES }, schema, [], 0);
  }

  /** An object of exactly these members in this order (a tool call's `{"name", "arguments"}`). */
  object(members: readonly (readonly [string, Expr])[]): Expr {
    return objectExpr(
      members.map(([key, value]) => ({ key, value, required: true })),
      (body) => this.#define('obj', body, []),
    );
  }

  /** Any one of `values` (a forced call of one of several functions). */
  anyOf(values: readonly Expr[]): Expr {
    return alt(...values);
  }

  /** The named rules so far (what references in the expressions name). */
  get rules(): ReadonlyMap<string, Expr> {
    return this.#rules;
  }

  /** The GBNF text of a grammar of `root`. */
  grammar(root: Expr): string {
    const loop = findLeftRecursion(this.#rules);
    if (loop) {
      throw new SchemaKeywordError(
        this.#ruleSites.get(loop) ?? [],
        '$ref',
        'leads back to itself before any value.',
      );
    }
    return writeGbnf(root, this.#rules);
  }

  #define(prefix: string, body: Expr, site: SchemaPath): string {
    const name = `${prefix}${this.#rules.size}`;
    this.#rules.set(name, body);
    this.#ruleSites.set(name, site);
    return name;
  }

  #compile(doc: Doc, schema: unknown, path: SchemaPath, depth: number): Expr {
    const e: Enforcer = doc.e;
    if (depth > MAX_SCHEMA_DEPTH) e.invalid(path, '', `nests deeper than ${MAX_SCHEMA_DEPTH} levels.`);
    if (--doc.left < 0) e.invalid(path, '', `has more than ${MAX_SCHEMA_NODES} sub-schemas to compile.`);
    if (schema === true) return this.#any();
    if (schema === false) e.invalid(path, '', 'is false: no value satisfies it.');
    if (!isSchemaObject(schema)) e.invalid(path, '', 'must be an object or a boolean.');
    for (const key of Object.keys(schema)) {
      if (!isAnnotation(key) && !ENFORCED_KEYWORDS.has(key)) e.cannot(path, key, 'is not supported.');
    }
    if (schema.$ref !== undefined) return this.#ref(doc, schema, path, depth);
    if (schema.allOf !== undefined) return this.#allOf(doc, schema, path, depth);
    if (schema.anyOf !== undefined || schema.oneOf !== undefined)
      return this.#anyOf(doc, schema, path, depth);
    if (schema.enum !== undefined || schema.const !== undefined) return this.#enum(doc, schema, path);
    const types = typesOf(schema, path, e);
    if (!types) return this.#any();
    return alt(
      ...types.map((type) => {
        switch (type) {
          case 'null':
            return lit('null');
          case 'boolean':
            return alt(lit('true'), lit('false'));
          case 'string':
            return stringExpr(schema, path, e);
          case 'integer':
          case 'number':
            return numberExpr(schema, type === 'integer', path, e);
          case 'array':
            return this.#array(doc, schema, path, depth);
          default:
            return this.#object(doc, schema, path, depth);
        }
      }),
    );
  }

  /** Keywords that constrain (not annotations, not unknown ones). */
  #constraints(schema: Schema, except: readonly string[]): Schema {
    return Object.fromEntries(
      Object.entries(schema).filter(([k]) => ENFORCED_KEYWORDS.has(k) && !except.includes(k)),
    );
  }

  /** `schema` with a `$ref` at its top replaced by what it points to (keywords beside it merged). */
  #resolved(doc: Doc, schema: unknown, path: SchemaPath, depth = 0): unknown {
    if (typeof schema !== 'boolean' && !isSchemaObject(schema))
      doc.e.invalid(path, '', 'must be an object or a boolean.');
    if (!isSchemaObject(schema) || schema.$ref === undefined) return schema;
    if (depth > MAX_SCHEMA_DEPTH) doc.e.invalid(path, '$ref', 'leads back to itself before any value.');
    const target = this.#target(doc, schema.$ref, path);
    const rest = this.#constraints(schema, ['$ref']);
    const resolved = this.#resolved(doc, target.schema, target.path, depth + 1);
    if (typeof resolved !== 'boolean' && !isSchemaObject(resolved))
      doc.e.invalid(target.path, '', 'must be an object or a boolean.');
    if (Object.keys(rest).length === 0) return resolved;
    return isSchemaObject(resolved) ? mergeSchemas(resolved, rest) : resolved === false ? false : rest;
  }

  #target(doc: Doc, $ref: unknown, path: SchemaPath): { schema: unknown; path: SchemaPath } {
    if (typeof $ref !== 'string') doc.e.invalid(path, '$ref', 'must be a string.');
    const target = resolvePointer(doc.root, $ref);
    if (!target)
      doc.e.invalid(path, '$ref', `'${$ref}' does not point into the schema (only '#…' references do).`);
    return target;
  }

  #ref(doc: Doc, schema: Schema, path: SchemaPath, depth: number): Expr {
    const $ref = schema.$ref as string;
    if (Object.keys(this.#constraints(schema, ['$ref'])).length > 0) {
      // Keywords beside the reference: the two merged, compiled in place.
      return this.#merged(doc, () => this.#resolved(doc, schema, path), path, '$ref', depth);
    }
    const target = this.#target(doc, $ref, path);
    let name = doc.refs.get($ref);
    if (name === undefined) {
      name = this.#define('ref', NEVER, path);
      doc.refs.set($ref, name);
      this.#rules.set(name, this.#compile(doc, target.schema, target.path, depth + 1));
    }
    return ref(name);
  }

  /** Compiles what `merge` gives; a MergeConflict is a keyword that cannot be enforced. */
  #merged(doc: Doc, merge: () => unknown, path: SchemaPath, keyword: string, depth: number): Expr {
    let merged: unknown;
    try {
      merged = merge();
    } catch (error) {
      if (!(error instanceof MergeConflict)) throw error;
      doc.e.cannot(path, keyword, `cannot be enforced: ${error.message}.`);
      return this.#any();
    }
    return this.#compile(doc, merged, path, depth + 1);
  }

  #allOf(doc: Doc, schema: Schema, path: SchemaPath, depth: number): Expr {
    const list = schema.allOf;
    if (!Array.isArray(list) || list.length === 0) doc.e.invalid(path, 'allOf', 'must be a non-empty array.');
    const { allOf: _, ...base } = schema;
    return this.#merged(
      doc,
      () =>
        list.reduce((acc: unknown, sub, i) => {
          const resolved = this.#resolved(doc, sub, [...path, 'allOf', i]);
          if (acc === false || resolved === false) return false;
          if (resolved === true) return acc;
          return mergeSchemas(acc as Schema, resolved as Schema);
        }, base as unknown),
      path,
      'allOf',
      depth,
    );
  }

  #anyOf(doc: Doc, schema: Schema, path: SchemaPath, depth: number): Expr {
    const e: Enforcer = doc.e;
    if (schema.anyOf !== undefined && schema.oneOf !== undefined)
      e.cannot(path, 'oneOf', 'beside anyOf is not supported.');
    const keyword = schema.anyOf !== undefined ? 'anyOf' : 'oneOf';
    const branches = schema[keyword];
    if (!Array.isArray(branches) || branches.length === 0)
      e.invalid(path, keyword, 'must be a non-empty array.');
    const siblings = this.#constraints(schema, ['anyOf', 'oneOf']);
    const shared = Object.keys(siblings).length > 0;
    if (
      keyword === 'oneOf' &&
      !disjointBranches(branches.map((b, i) => this.#resolved(doc, b, [...path, 'oneOf', i])))
    ) {
      e.cannot(
        path,
        'oneOf',
        'is enforced only when its branches cannot overlap (different types, or objects told apart by a required const property); use anyOf.',
      );
    }
    return alt(
      ...branches.map((branch, i) => {
        const at = [...path, keyword, i];
        if (!shared) return this.#compile(doc, branch, at, depth + 1);
        return this.#merged(
          doc,
          () => {
            const resolved = this.#resolved(doc, branch, at);
            if (resolved === false) return false;
            return resolved === true ? siblings : mergeSchemas(siblings, resolved as Schema);
          },
          at,
          keyword,
          depth,
        );
      }),
    );
  }

  #enum(doc: Doc, schema: Schema, path: SchemaPath): Expr {
    const keyword = schema.const !== undefined ? 'const' : 'enum';
    if (schema.enum !== undefined && (!Array.isArray(schema.enum) || schema.enum.length === 0))
      doc.e.invalid(path, 'enum', 'must be a non-empty array.');
    const values = schema.const !== undefined ? [schema.const] : (schema.enum as unknown[]);
    const { enum: _, const: __, ...rest } = schema;
    const kept = values.filter((v) =>
      valueFits(v, { ...rest, ...(schema.const !== undefined && schema.enum ? { enum: schema.enum } : {}) }),
    );
    if (kept.length === 0)
      doc.e.invalid(path, keyword, 'leaves no value: none satisfies the keywords beside it.');
    return alt(...kept.map((v) => lit(JSON.stringify(v))));
  }

  #object(doc: Doc, schema: Schema, path: SchemaPath, depth: number): Expr {
    const e: Enforcer = doc.e;
    const properties = schema.properties ?? {};
    if (!isSchemaObject(properties)) e.invalid(path, 'properties', 'must be an object.');
    const required = schema.required ?? [];
    if (!Array.isArray(required) || required.some((r) => typeof r !== 'string'))
      e.invalid(path, 'required', 'must be an array of strings.');
    const additional = schema.additionalProperties;
    if (additional !== undefined && typeof additional !== 'boolean' && !isSchemaObject(additional))
      e.invalid(path, 'additionalProperties', 'must be a boolean or a schema.');
    const names = Object.keys(properties);
    const undeclared = (required as string[]).filter((r) => !names.includes(r));
    if (undeclared.length > 0 && additional === false)
      e.invalid(path, 'required', `names '${undeclared[0]}', which properties does not declare.`);
    const extra = () =>
      isSchemaObject(additional)
        ? this.#compile(doc, additional, [...path, 'additionalProperties'], depth + 1)
        : this.#any();
    const minP = countOf(schema, 'minProperties', path, e);
    const maxP = countOf(schema, 'maxProperties', path, e);
    if (names.length === 0 && undeclared.length === 0 && additional !== false) {
      // Free keys: a key written twice would count once, so a least number can't be promised.
      if (minP > 0) e.cannot(path, 'minProperties', 'is not enforced on an object of free keys.');
      return mapExpr(this.#anyString(), extra(), maxP);
    }
    const members: Member[] = names.map((key) => ({
      key,
      value: this.#compile(doc, properties[key], [...path, 'properties', key], depth + 1),
      required: (required as string[]).includes(key),
    }));
    for (const key of undeclared) members.push({ key, value: extra(), required: true });
    const least = members.filter((m) => m.required).length;
    if (minP > least)
      e.cannot(path, 'minProperties', 'is enforced only up to the number of required properties.');
    if (maxP < members.length)
      e.cannot(path, 'maxProperties', 'is enforced only from the number of properties.');
    return objectExpr(members, (body) => this.#define('obj', body, path));
  }

  #array(doc: Doc, schema: Schema, path: SchemaPath, depth: number): Expr {
    const e: Enforcer = doc.e;
    const min = Math.min(countOf(schema, 'minItems', path, e, 0), MAX_ARRAY_ITEMS);
    let max = countOf(schema, 'maxItems', path, e);
    if (max !== Number.POSITIVE_INFINITY && max > MAX_ARRAY_ITEMS) {
      e.cannot(path, 'maxItems', `is above ${MAX_ARRAY_ITEMS}.`);
      max = Number.POSITIVE_INFINITY;
    }
    if (min > max) e.invalid(path, 'minItems', 'is greater than maxItems.');
    if (schema.prefixItems !== undefined && !Array.isArray(schema.prefixItems))
      e.invalid(path, 'prefixItems', 'must be an array of schemas.');
    const tupleKey = Array.isArray(schema.prefixItems) ? 'prefixItems' : 'items';
    const tuple = (
      Array.isArray(schema.prefixItems) ? schema.prefixItems : Array.isArray(schema.items) ? schema.items : []
    ) as unknown[];
    const restKey =
      tupleKey === 'prefixItems' ? 'items' : Array.isArray(schema.items) ? 'additionalItems' : 'items';
    const restSchema = schema[restKey];
    if (tuple.length > max)
      e.cannot(path, 'maxItems', `is less than the ${tuple.length} items of ${tupleKey}.`);
    if (schema.uniqueItems === true && max > 1)
      e.cannot(path, 'uniqueItems', 'is enforced only with maxItems 1.');
    const items = tuple.map((x, i) => this.#compile(doc, x, [...path, tupleKey, i], depth + 1));
    // Past a tuple, items the schema leaves open are written only when minItems needs them.
    let rest: Expr | null = null;
    if (restSchema === undefined) rest = tuple.length === 0 || min > tuple.length ? this.#any() : null;
    else if (restSchema !== false) rest = this.#compile(doc, restSchema, [...path, restKey], depth + 1);
    if (!rest && min > tuple.length)
      e.invalid(path, 'minItems', `asks for more items than ${tupleKey} allows.`);
    if (tuple.length === 0) return arrayExpr([], rest, min, max);
    const more = restSchema === undefined && min <= tuple.length ? 0 : max - tuple.length;
    return arrayExpr(items, rest, Math.max(0, min - tuple.length), Math.max(0, more));
  }

  /** Any JSON string. */
  #anyString(): Expr {
    return jsonString(rep(cls(ANY_TEXT), 0, Number.POSITIVE_INFINITY));
  }

  /** Any JSON value (rules defined on first use). */
  #any(): Expr {
    if (this.#anyValue) return this.#anyValue;
    const value = ref('json-value');
    this.#anyValue = value;
    const string = this.#anyString();
    this.#rules.set('json-object', mapExpr(string, value, Number.POSITIVE_INFINITY));
    this.#rules.set('json-array', arrayExpr([], value, 0, Number.POSITIVE_INFINITY));
    this.#rules.set(
      'json-value',
      alt(
        ref('json-object'),
        ref('json-array'),
        string,
        decimalRange(null, null, MAX_INTEGER_DIGITS, MAX_FRACTION_DIGITS),
        lit('true'),
        lit('false'),
        lit('null'),
      ),
    );
    return value;
  }
}

/** A count keyword (minItems, maxProperties, …): a non-negative integer; absent: `fallback`. */
function countOf(
  schema: Schema,
  key: string,
  path: SchemaPath,
  e: Enforcer,
  fallback = Number.POSITIVE_INFINITY,
): number {
  const value = schema[key];
  if (value === undefined) return key.startsWith('min') ? 0 : fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0)
    e.invalid(path, key, 'must be a non-negative integer.');
  return value;
}
