import { jsonSchemaGrammar, SchemaKeywordError } from '@gpumesh/protocol/internal';
import { ApiError } from '../errors.js';

/** Schemas whose verdict is kept (by their text and strictness): a client sends the same one often. */
const MAX_VERDICTS = 256;
/** Each schema's verdict: null when the nodes' grammar takes it, else why not. */
const verdicts = new Map<string, SchemaKeywordError | null>();

/**
 * Refuses, before routing, a JSON Schema the nodes' grammar would refuse (the same compiler,
 * @gpumesh/protocol/internal): under `strict`, any keyword it cannot enforce; in any case, a schema
 * that is invalid or that no value satisfies. The 400 names the keyword where it stands, `param`
 * being `where` and the keyword's path (`response_format.json_schema.schema.properties.code.pattern`);
 * `what` says whose schema it is in the message. Verdicts are cached by schema text, so a schema
 * seen before costs one JSON.stringify.
 */
export function checkJsonSchema(schema: unknown, strict: boolean, where: string, what: string): void {
  const key = `${strict ? 's' : 'l'}${JSON.stringify(schema)}`;
  let verdict = verdicts.get(key);
  if (verdict === undefined) {
    verdict = null;
    try {
      jsonSchemaGrammar(schema, { strict });
    } catch (error) {
      if (!(error instanceof SchemaKeywordError)) throw error;
      verdict = error;
    }
    if (verdicts.size >= MAX_VERDICTS) verdicts.delete(verdicts.keys().next().value!);
    verdicts.set(key, verdict);
  }
  if (verdict) {
    throw new ApiError('invalid_request', `Invalid schema for ${what}: ${verdict.message}`, {
      param: [where, verdict.param].filter(Boolean).join('.'),
    });
  }
}
