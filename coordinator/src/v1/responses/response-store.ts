/**
 * Stored responses: one row per response with `store` (OpenAI's default), read back by its owner
 * only — another user's id is as unknown as a made-up one (404, nothing leaked).
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { ApiError } from '../../errors.js';
import type { ListedInputItem } from './input-items.js';
import type { ChatMessage } from './to-chat.js';

export type StoredResponse = { response: Record<string, unknown>; conversation: ChatMessage[] };

export async function saveResponse(
  db: Kysely<Database>,
  row: { id: string; userId: string; now: number; inputItems: ListedInputItem[] } & StoredResponse,
): Promise<void> {
  await db
    .insertInto('stored_responses')
    .values({
      id: row.id,
      user_id: row.userId,
      response: JSON.stringify(row.response),
      conversation: JSON.stringify(row.conversation),
      input_items: JSON.stringify(row.inputItems),
      created_at: row.now,
    })
    .execute();
}

/** `id` as stored for `userId`; a 404 naming `param` when there is none. */
export async function loadResponse(
  db: Kysely<Database>,
  userId: string,
  id: string,
  param = 'response_id',
): Promise<StoredResponse> {
  const row = await db
    .selectFrom('stored_responses')
    .select(['response', 'conversation'])
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  if (!row) throw new ApiError('not_found', `No stored response "${id}".`, { param });
  return { response: JSON.parse(row.response), conversation: JSON.parse(row.conversation) };
}

/** The input items of `id` as stored for `userId` (null: stored before they were kept); 404 when none. */
export async function loadInputItems(
  db: Kysely<Database>,
  userId: string,
  id: string,
): Promise<ListedInputItem[] | null> {
  const row = await db
    .selectFrom('stored_responses')
    .select('input_items')
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  if (!row) throw new ApiError('not_found', `No stored response "${id}".`, { param: 'response_id' });
  return row.input_items === null ? null : JSON.parse(row.input_items);
}

/** Deletes `id` for `userId`; a 404 when there is none. */
export async function deleteResponse(db: Kysely<Database>, userId: string, id: string): Promise<void> {
  const done = await db
    .deleteFrom('stored_responses')
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  if (Number(done.numDeletedRows) === 0)
    throw new ApiError('not_found', `No stored response "${id}".`, { param: 'response_id' });
}
