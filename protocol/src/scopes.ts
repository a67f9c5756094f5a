import { Type } from '@sinclair/typebox';

/** Capability scopes a node may claim in its manifest; a coordinator grants them by tier. */
export const SCOPES = [
  'infer.chat',
  'infer.text',
  'infer.embed',
  'infer.vision',
  'infer.voice',
  'relay',
  'verify',
] as const;
export type Scope = (typeof SCOPES)[number];
export const ScopeSchema = Type.Union(SCOPES.map((scope) => Type.Literal(scope)));

/**
 * A scope a coordinator grants (welcome.scopes): any scope name, so a later version's new scope
 * reaches an older node as a value it ignores, not a schema error (NODE_PROTOCOL.md §2, v0.2).
 */
export const GrantedScopeSchema = Type.String({ pattern: '^[a-z][a-z0-9._-]{0,63}$' });

/** The scopes of `values` this version knows, in order (unknown ones are ignored). */
export function knownScopes(values: readonly string[]): Scope[] {
  return values.filter((v): v is Scope => (SCOPES as readonly string[]).includes(v));
}

/** Model families a node may serve. */
export const MODEL_FAMILIES = ['chat', 'text', 'embedding', 'vision', 'voice'] as const;
export type ModelFamily = (typeof MODEL_FAMILIES)[number];

/** The scope a node needs to serve a model of each family. */
export const SCOPE_FOR_FAMILY = {
  chat: 'infer.chat',
  text: 'infer.text',
  embedding: 'infer.embed',
  vision: 'infer.vision',
  voice: 'infer.voice',
} as const satisfies Record<ModelFamily, Scope>;
