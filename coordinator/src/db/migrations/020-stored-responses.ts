import type { Kysely, Migration } from 'kysely';

/**
 * Stored responses (v1/responses/): what GET /v1/responses/{id} returns and what
 * `previous_response_id` continues — the response object and the conversation up to its answer.
 */
export const storedResponses020: Migration & { name: string } = {
  name: '020-stored-responses',
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('stored_responses')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'text', (c) => c.notNull())
      /** JSON: the Response object as the client got it. */
      .addColumn('response', 'text', (c) => c.notNull())
      /** JSON: the chat messages up to and with the answer, without the instructions. */
      .addColumn('conversation', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('stored_responses_user')
      .on('stored_responses')
      .columns(['user_id', 'created_at'])
      .execute();
  },
};
