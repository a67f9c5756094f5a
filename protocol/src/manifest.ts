import { type Static, Type } from '@sinclair/typebox';
import { VOICE_KINDS } from './media.js';
import { Address, Count, DecimalString, Role, Software, Text, Timestamp } from './primitives.js';
import { MODEL_FAMILIES, ScopeSchema } from './scopes.js';

/** Compute backends a GPU (or the CPU) runs models with. */
export const BACKENDS = ['cuda', 'vulkan', 'metal', 'rocm', 'cpu'] as const;
export type Backend = (typeof BACKENDS)[number];

/** Currencies a node prices in: USD (nanousd base units) or the chain's native token (wei). */
export const CURRENCIES = ['USD', 'NATIVE'] as const;
export type Currency = (typeof CURRENCIES)[number];

export const GpuSchema = Type.Object({
  index: Count,
  vendor: Text(64),
  name: Text(128),
  vramTotalBytes: Count,
  vramFreeBytes: Count,
  driver: Text(64),
  backend: Type.Union(BACKENDS.map((b) => Type.Literal(b))),
});

export const CpuSchema = Type.Object({
  model: Text(128),
  cores: Count,
  threads: Count,
  arch: Text(32),
});

export const HardwareSchema = Type.Object({
  gpus: Type.Array(GpuSchema, { maxItems: 64 }),
  cpu: CpuSchema,
  ramBytes: Count,
});

export const RuntimeSchema = Type.Object({
  /** e.g. `node-llama-cpp`, `vllm`, `ollama`. */
  name: Text(64),
  version: Text(64),
});

/**
 * A price per million tokens, as an integer string of base units: nanousd (1e-9 USD) when the
 * currency is USD, wei (1e-18 of the native token) when it is NATIVE.
 */
export const PriceSchema = Type.Object({
  currency: Type.Union(CURRENCIES.map((c) => Type.Literal(c))),
  inputPerMTok: DecimalString,
  outputPerMTok: DecimalString,
  /**
   * v0.5, chat models: the price of a prompt token the node's KV cache held (`cached_tokens`), at
   * most `inputPerMTok` (a frame rule: a larger value is a schema_violation). Absent: the input price.
   */
  cachedInputPerMTok: Type.Optional(DecimalString),
  /** Voice models serving transcription or translation: base units per second of audio in. */
  inputPerSecond: Type.Optional(DecimalString),
  /** Voice models serving speech: base units per million characters of text in. */
  inputPerMChar: Type.Optional(DecimalString),
});

export const ModelOfferSchema = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 256 }),
  family: Type.Union(MODEL_FAMILIES.map((f) => Type.Literal(f))),
  contextLength: Count,
  maxConcurrency: Type.Integer({ minimum: 1 }),
  price: PriceSchema,
  /**
   * SHA-256 (lowercase hex) of the weights file served (a GGUF), when the node serves a local
   * file: the coordinator lists a known hash under the catalog's canonical id, so every node
   * serving the same weights competes under one id. Absent for runtimes that can't hash their
   * weights (an OpenAI-compatible upstream).
   */
  sha256: Type.Optional(Type.String({ pattern: '^[0-9a-f]{64}$' })),
  /**
   * Voice models: the voice jobs this model serves (`transcription`, `translation`, `speech`). A
   * voice model without it is not routed; other families ignore it.
   */
  kinds: Type.Optional(
    Type.Array(Type.Union(VOICE_KINDS.map((k) => Type.Literal(k))), { minItems: 1, maxItems: 3 }),
  ),
  /**
   * v0.3, `chat` and `text` models: the node continues a job's `continueFrom` (NODE_PROTOCOL.md §9
   * "Continuing an answer"). A coordinator sends `continueFrom` to no other offer: a node that does
   * not know the field would ignore it and answer from the start.
   */
  continues: Type.Optional(Type.Boolean()),
});

/** The capability manifest a node publishes, signed by its node key (see `signManifest`). */
export const ManifestSchema = Type.Object({
  nodeId: Address,
  role: Role,
  hardware: HardwareSchema,
  runtimes: Type.Array(RuntimeSchema, { maxItems: 32 }),
  models: Type.Array(ModelOfferSchema, { maxItems: 256 }),
  scopes: Type.Array(ScopeSchema, { maxItems: 16 }),
  /** gRPC endpoint `host:port` where peers reach this node's peer-RPC service. */
  peerRpc: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  /** The owner wallet (staker), when the node names one in `auth`. */
  owner: Type.Optional(Address),
  software: Software,
  protocolVersion: Count,
  issuedAt: Timestamp,
});

export type Gpu = Static<typeof GpuSchema>;
export type Cpu = Static<typeof CpuSchema>;
export type Hardware = Static<typeof HardwareSchema>;
export type Runtime = Static<typeof RuntimeSchema>;
export type Price = Static<typeof PriceSchema>;
export type ModelOffer = Static<typeof ModelOfferSchema>;
export type Manifest = Static<typeof ManifestSchema>;
