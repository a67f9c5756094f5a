/**
 * `@gpumesh/protocol/internal`: what gpumesh's own node and coordinator share that an outside
 * implementer does not need: helpers NODE_PROTOCOL.md does not specify, and gpumesh's own policies
 * it describes but no peer computes — how this coordinator decides a verdict (§9 "Deciding"), what
 * a tier grants (§7), how it tracks a node's presence (§8), the text an owner signs to link a node
 * (the coordinator's HTTP API). No compatibility promise: it may change in any release, so other
 * code should not import it.
 */
export { nodeLinkText, verifyNodeLink } from './identity/node-link-text.js';

export {
  JsonGrammarBuilder,
  type SchemaGrammarOptions,
} from './json-schema-grammar/json-grammar-builder.js';
export { jsonSchemaGrammar } from './json-schema-grammar/json-schema-grammar.js';
export { proseOrArray } from './json-schema-grammar/prose-or-array.js';
export { SchemaKeywordError, type SchemaPath } from './json-schema-grammar/schema-keyword-error.js';
export * from './presence.js';
export { sendCoalesced } from './send-coalesced.js';
export {
  DEFAULT_TIER_THRESHOLDS_WEI,
  grantScopes,
  TIER_BENEFITS,
  type TierBenefits,
  type TierThresholds,
  tierForStake,
} from './tiers.js';
export * from './verification-evidence.js';
