/**
 * `@gpumesh/protocol/internal`: what gpumesh's own node and coordinator share that is not the
 * protocol (NODE_PROTOCOL.md does not specify it). No compatibility promise: it may change in any
 * release, so other code should not import it.
 */

export {
  JsonGrammarBuilder,
  type SchemaGrammarOptions,
} from './json-schema-grammar/json-grammar-builder.js';
export { jsonSchemaGrammar } from './json-schema-grammar/json-schema-grammar.js';
export { proseOrArray } from './json-schema-grammar/prose-or-array.js';
export { SchemaKeywordError, type SchemaPath } from './json-schema-grammar/schema-keyword-error.js';
export { sendCoalesced } from './send-coalesced.js';
