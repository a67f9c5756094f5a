/**
 * A response's input items as OpenAI lists them (`GET /v1/responses/{id}/input_items`): each
 * message with its content as `input_text` parts (`output_text` for an assistant's), each function
 * call and function call output, every item with an id — the client's own when it gave one, else
 * one made here from the response's id (`msg_<hex>_in<i>`), so a listing is the same every time.
 */
import type { InputItem, ResponsesBody } from './schemas.js';

export type ListedInputItem = Record<string, unknown> & { id: string };

/** The items of `input` (item references already resolved) of response `responseId`. */
export function inputItemsOf(input: ResponsesBody['input'], responseId: string): ListedInputItem[] {
  const hex = responseId.slice('resp_'.length);
  const items: readonly InputItem[] =
    typeof input === 'string' ? [{ type: 'message', role: 'user', content: input }] : input;
  return items.map((item, i) => {
    if (item.type === 'function_call')
      return {
        id: item.id ?? `fc_${hex}_in${i}`,
        type: 'function_call',
        status: 'completed',
        call_id: item.call_id,
        name: item.name,
        arguments: item.arguments,
      };
    if (item.type === 'function_call_output')
      return {
        id: item.id ?? `fco_${hex}_in${i}`,
        type: 'function_call_output',
        status: 'completed',
        call_id: item.call_id,
        output: item.output,
      };
    if (item.type === 'item_reference') return { id: item.id, type: 'item_reference' };
    const part = item.role === 'assistant' ? 'output_text' : 'input_text';
    const content =
      typeof item.content === 'string'
        ? [{ type: part, text: item.content }]
        : item.content.map((p) => ({ type: p.type, text: p.text }));
    return {
      id: item.id ?? `msg_${hex}_in${i}`,
      type: 'message',
      role: item.role,
      status: 'completed',
      content,
    };
  });
}
