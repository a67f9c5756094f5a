/**
 * `@gpumesh/protocol`: what an outside implementer of a node or a coordinator needs — frames
 * (TypeBox schemas = types + JSON Schemas), the validator every receiver applies, identity
 * signatures, scopes and tier names, and the session engine both sides adapt: frame order per side
 * (SessionOrder), typed job errors (errorFrame, readJobError) and the token count of a streamed
 * chunk (chunkTokens). The conformance kit is `@gpumesh/protocol/conformance`; what only gpumesh's
 * own coordinator and node use (its verdict statistics, tier policy, presence bookkeeping, the
 * owner-link text) is `@gpumesh/protocol/internal`. protocol/README.md lists every export
 * (src/public-exports.test.ts keeps the two in step): add one there when you add one here.
 */
export { chunkTokens } from './chunk-tokens.js';
export * from './constants.js';
export { createFrame } from './create-frame.js';
export { encodeFrame } from './encode-frame.js';
export { type ErrorFrameOptions, errorFrame, MAX_ERROR_MESSAGE_CHARS } from './error-frame.js';
export {
  errorCodeForClose,
  isProtocolErrorCode,
  PROTOCOL_ERROR_CODES,
  PROTOCOL_ERRORS,
  ProtocolError,
  type ProtocolErrorCode,
} from './errors.js';
export { frameJsonSchema } from './frame-json-schema.js';
export { canonicalJson } from './identity/canonical-json.js';
export { challengeText } from './identity/challenge-text.js';
export { ownerProofText } from './identity/owner-proof-text.js';
export { signChallenge } from './identity/sign-challenge.js';
export { signManifest } from './identity/sign-manifest.js';
export { signOwnerProof } from './identity/sign-owner-proof.js';
export type { MessageSigner } from './identity/signer.js';
export { type VerifyChallengeParameters, verifyChallenge } from './identity/verify-challenge.js';
export { verifyManifest } from './identity/verify-manifest.js';
export { verifyOwnerProof } from './identity/verify-owner-proof.js';
export * from './manifest.js';
export * from './media.js';
export * from './messages.js';
export { negotiateVersion } from './negotiate-version.js';
export { type ParseFrameOptions, parseFrame, type RawFrame } from './parse-frame.js';
export * from './prefix-keys.js';
export { Address, DecimalString, NODE_ROLES, type NodeRole, Signature, Timestamp } from './primitives.js';
export { type JobError, readJobError } from './read-job-error.js';
export {
  PENALTY_WINDOW_TOKENS,
  type SampledPosition,
  type Sampling,
  sampledPosition,
} from './sampled-distribution.js';
export * from './scopes.js';
export {
  frameAllowed,
  type Receiver,
  SESSION_ORDER,
  SESSION_PHASES,
  SessionOrder,
  type SessionPhase,
  type SessionSide,
} from './session-order.js';
export { TIER_NAMES, type TierName } from './tiers.js';
