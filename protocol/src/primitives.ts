import { Type } from '@sinclair/typebox';

/** An EVM address, 0x + 40 hex digits (any case; compare lower-cased). */
export const Address = Type.String({ pattern: '^0x[0-9a-fA-F]{40}$', description: 'EVM address' });

/** A 65-byte secp256k1 signature, 0x + 130 hex digits (r ‖ s ‖ v). */
export const Signature = Type.String({ pattern: '^0x[0-9a-fA-F]{130}$', description: 'EIP-191 signature' });

/** A non-negative integer written as a decimal string (money in base units: nanousd or wei). */
export const DecimalString = Type.String({
  pattern: '^(0|[1-9][0-9]{0,77})$',
  description: 'integer string',
});

/** An RFC 3339 / ISO 8601 UTC timestamp such as 2026-01-01T00:00:00.000Z. */
export const Timestamp = Type.String({
  pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]{1,9})?Z$',
  description: 'UTC timestamp',
});

/** A short identifier (job ids, session ids, nonces). */
export const Id = Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9._:-]+$' });

/** A bounded human-readable text. */
export const Text = (maxLength: number) => Type.String({ maxLength });

/** A non-negative integer. */
export const Count = Type.Integer({ minimum: 0 });

/** Node roles: `gpu` and `cpu` serve inference, `network` relays traffic. */
export const NODE_ROLES = ['gpu', 'cpu', 'network'] as const;
export type NodeRole = (typeof NODE_ROLES)[number];
export const Role = Type.Union(NODE_ROLES.map((role) => Type.Literal(role)));

/** Software that speaks the protocol (node daemon or coordinator). */
export const Software = Type.Object({ name: Text(64), version: Text(64) });
