/** Why a JSON Schema has no grammar: the keyword, where it stands, and the reason. */

/** A location in a schema: property names and array indexes from its root. */
export type SchemaPath = readonly (string | number)[];

/**
 * A schema keyword the grammar cannot enforce (or a schema no value satisfies, or one that is not
 * valid): `path` is where the keyword stands, `keyword` the keyword. `param` is the two joined with
 * dots, as OpenAI's errors name a member (`properties.code.pattern`).
 */
export class SchemaKeywordError extends Error {
  override readonly name = 'SchemaKeywordError';
  readonly param: string;

  constructor(
    readonly path: SchemaPath,
    readonly keyword: string,
    readonly reason: string,
  ) {
    const param = [...path, ...(keyword ? [keyword] : [])].join('.');
    super(
      `${keyword ? `'${keyword}'` : 'The schema'}${path.length ? ` at ${path.join('.')}` : ''} ${reason}`,
    );
    this.param = param;
  }
}

/**
 * Keywords that only describe (JSON Schema's annotations, OpenAPI's and vendors' `x-…`), and the
 * containers of definitions a `$ref` reads: taken, no effect on the grammar.
 */
export const ANNOTATION_KEYWORDS: ReadonlySet<string> = new Set([
  '$schema',
  '$id',
  '$comment',
  '$defs',
  'definitions',
  'title',
  'description',
  'examples',
  'example',
  'default',
  'deprecated',
  'readOnly',
  'writeOnly',
  'contentEncoding',
  'contentMediaType',
  'discriminator',
]);

/** Keywords the grammar enforces (some only in part: the compiler says when it cannot). */
export const ENFORCED_KEYWORDS: ReadonlySet<string> = new Set([
  'type',
  'nullable',
  'enum',
  'const',
  'anyOf',
  'oneOf',
  'allOf',
  '$ref',
  'properties',
  'required',
  'additionalProperties',
  'minProperties',
  'maxProperties',
  'items',
  'prefixItems',
  'additionalItems',
  'minItems',
  'maxItems',
  'uniqueItems',
  'minLength',
  'maxLength',
  'pattern',
  'format',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
]);

export const isAnnotation = (keyword: string): boolean =>
  ANNOTATION_KEYWORDS.has(keyword) || keyword.startsWith('x-');
