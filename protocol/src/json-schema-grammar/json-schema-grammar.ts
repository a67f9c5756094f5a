/** One JSON Schema as a llama.cpp grammar: what `response_format` and the node's tool calls ask for. */
import { JsonGrammarBuilder, type SchemaGrammarOptions } from './json-grammar-builder.js';

/**
 * The GBNF text of the JSON values `schema` allows (json-grammar-builder.ts). Throws
 * SchemaKeywordError for a keyword it cannot enforce under `strict`, and for an invalid or
 * unsatisfiable schema in any case.
 */
export function jsonSchemaGrammar(schema: unknown, options: SchemaGrammarOptions): string {
  const builder = new JsonGrammarBuilder();
  return builder.grammar(builder.value(schema, options));
}
