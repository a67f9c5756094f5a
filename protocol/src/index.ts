/**
 * `@gpumesh/protocol`: the open node protocol v0 — frames (TypeBox schemas = types + JSON Schemas),
 * the validator every receiver applies, identity signatures, tiers, scopes and presence.
 * The conformance kit is `@gpumesh/protocol/conformance`.
 */
export * from './constants.js';
export { createFrame } from './createFrame.js';
export { encodeFrame } from './encodeFrame.js';
export {
  errorCodeForClose,
  isProtocolErrorCode,
  PROTOCOL_ERROR_CODES,
  PROTOCOL_ERRORS,
  ProtocolError,
  type ProtocolErrorCode,
} from './errors.js';
export { frameJsonSchema } from './frameJsonSchema.js';
export { canonicalJson } from './identity/canonicalJson.js';
export { challengeText } from './identity/challengeText.js';
export { ownerProofText } from './identity/ownerProofText.js';
export { signChallenge } from './identity/signChallenge.js';
export type { MessageSigner } from './identity/signer.js';
export { signManifest } from './identity/signManifest.js';
export { signOwnerProof } from './identity/signOwnerProof.js';
export { type VerifyChallengeParameters, verifyChallenge } from './identity/verifyChallenge.js';
export { verifyManifest } from './identity/verifyManifest.js';
export { verifyOwnerProof } from './identity/verifyOwnerProof.js';
export * from './manifest.js';
export * from './messages.js';
export { negotiateVersion } from './negotiateVersion.js';
export { type ParseFrameOptions, parseFrame, type RawFrame } from './parseFrame.js';
export {
  loadPeerProto,
  PEER_METHODS,
  PEER_PROTO_OPTIONS,
  PEER_PROTO_PATH,
  PEER_SERVICE,
} from './peer/loadPeerProto.js';
export { macPeerCall, peerCallMac } from './peer/macPeerCall.js';
export { type PeerCall, peerCallText } from './peer/peerCallText.js';
export { signPeerCall } from './peer/signPeerCall.js';
export type * from './peer/types.js';
export {
  DEFAULT_PEER_CALL_SKEW_MS,
  type PeerCallRejection,
  type VerifyPeerCallOptions,
  verifyPeerCall,
} from './peer/verifyPeerCall.js';
export * from './presence.js';
export { Address, DecimalString, NODE_ROLES, type NodeRole, Signature, Timestamp } from './primitives.js';
export * from './scopes.js';
export { sendCoalesced } from './sendCoalesced.js';
export {
  frameAllowed,
  type Receiver,
  SESSION_ORDER,
  SESSION_PHASES,
  type SessionPhase,
} from './sessionOrder.js';
export * from './tiers.js';
