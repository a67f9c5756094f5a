import type { Kysely, Migration } from 'kysely';

/**
 * What OpenRouter's and OpenAI's read routes report that was not kept: whether each request was
 * streamed (1) or not (0), OpenRouter's `streamed` in `GET /api/v1/generation`; and each stored
 * response's input items as OpenAI lists them (`GET /v1/responses/{id}/input_items`). Both null
 * for rows written before this migration.
 */
export const openRouterShapes022: Migration & { name: string } = {
  name: '022-openrouter-shapes',
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('usage_records').addColumn('streamed', 'integer').execute();
    await db.schema.alterTable('stored_responses').addColumn('input_items', 'text').execute();
  },
};
