import type { Kysely, Migration } from 'kysely';

/**
 * Cached prompt tokens (issue 44): of a request's prompt tokens, those billed at the node's cached
 * price (never more than the coordinator's bound, router/sent-prefixes.ts), and what that saved
 * the user against the input price, nanousd (OpenRouter's `native_tokens_cached` and
 * `cache_discount` in `GET /api/v1/generation`). Null for rows written before this migration and
 * for requests with nothing cached.
 */
export const cachedTokens025: Migration & { name: string } = {
  name: '025-cached-tokens',
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('usage_records').addColumn('cached_tokens', 'bigint').execute();
    await db.schema.alterTable('usage_records').addColumn('cache_discount_nano', 'bigint').execute();
  },
};
