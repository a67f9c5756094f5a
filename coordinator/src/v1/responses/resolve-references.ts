/**
 * `item_reference` input items → the stored output items they name. The AI SDK's Responses
 * provider, while `store` is on (its default), sends the calls of a previous step by reference.
 * An item's id carries its response's (response-object.ts `outputItemIds`), so the reference reads
 * that one stored response, its owner's only: another user's item is as unknown as a made-up one.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { ApiError } from '../../errors.js';
import { responseIdOfItem } from './response-object.js';
import { loadResponse } from './response-store.js';
import type { InputItem, ResponsesBody } from './schemas.js';

export async function resolveReferences(
  db: Kysely<Database>,
  userId: string,
  input: ResponsesBody['input'],
): Promise<ResponsesBody['input']> {
  if (typeof input === 'string' || !input.some((item) => item.type === 'item_reference')) return input;
  const outputs = new Map<string, Record<string, unknown>[]>();
  const resolved: InputItem[] = [];
  for (const item of input) {
    if (item.type !== 'item_reference') {
      resolved.push(item);
      continue;
    }
    const unknown = new ApiError('not_found', `No stored item "${item.id}".`, { param: 'input' });
    const responseId = responseIdOfItem(item.id);
    if (!responseId) throw unknown;
    let output = outputs.get(responseId);
    if (!output) {
      const stored = await loadResponse(db, userId, responseId, 'input').catch(() => {
        throw unknown;
      });
      output = (stored.response.output as Record<string, unknown>[] | undefined) ?? [];
      outputs.set(responseId, output);
    }
    const found = output.find((o) => o.id === item.id);
    if (!found) throw unknown;
    resolved.push(asInputItem(found));
  }
  return resolved;
}

/** A stored output item (a message or a function call) as the input item it stands for. */
function asInputItem(item: Record<string, unknown>): InputItem {
  if (item.type === 'function_call') {
    return {
      type: 'function_call',
      call_id: String(item.call_id),
      name: String(item.name),
      arguments: String(item.arguments),
    };
  }
  const text = ((item.content as { text?: string }[] | undefined) ?? []).map((c) => c.text ?? '').join('');
  return { type: 'message', role: 'assistant', content: text };
}
