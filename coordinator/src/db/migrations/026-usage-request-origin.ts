import type { Kysely, Migration } from 'kysely';

/**
 * Who sent each request, as OpenRouter's `GET /api/v1/generation` reports it (issue 45): `origin`
 * (the request's Origin header, else the scheme and host of its HTTP-Referer), `http_referer` (the
 * HTTP-Referer header, OpenRouter's app attribution, else Referer), `user_agent` and
 * `external_user` (the body's `user`), each at most 512 characters. Null for rows written before
 * this migration, for what the request did not say, and for every request with `provider.zdr`.
 * And `upstream_id`: the id the serving node knew the job by (its frames' jobId), OpenRouter's
 * provider-side id of a generation.
 */
export const usageRequestOrigin026: Migration & { name: string } = {
  name: '026-usage-request-origin',
  async up(db: Kysely<unknown>) {
    for (const column of ['origin', 'http_referer', 'user_agent', 'external_user', 'upstream_id'])
      await db.schema.alterTable('usage_records').addColumn(column, 'text').execute();
  },
};
