/**
 * OpenAI's Response object, from what a chat completion answered: output items (a message with
 * its output_text, then one function_call item per tool call), usage in input/output tokens (with
 * our `cost` beside), and `incomplete` with reason max_output_tokens when the answer was cut.
 */
import { randomBytes } from 'node:crypto';
import type { ResponsesBody } from './schemas.js';

/** What the model answered, however it arrived (one response or a stream). */
export type Answer = {
  text: string;
  calls: { callId: string; name: string; arguments: string }[];
  /** The chat finish reason: stop, length, tool_calls… */
  finish: string;
  usage: ChatUsage | undefined;
};

export type ChatUsage = {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens?: number;
  cost?: number;
  /** Of prompt_tokens, those billed as cached (router/settle-outcome.ts). */
  prompt_tokens_details?: { cached_tokens?: number };
};

/** The request's side of a response: its id, time, model and the request members it echoes. */
export type ResponseMeta = {
  id: string;
  /** Unix seconds. */
  createdAt: number;
  body: ResponsesBody;
  /** The coordinator's clock, ms: when a completed response completed. */
  now: () => number;
};

/** An id of OpenAI's shape: `prefix_` and 48 hex digits. */
export const itemId = (prefix: string) => `${prefix}_${randomBytes(24).toString('hex')}`;

/** The ids of a response's output items. */
export type OutputItemIds = { message: string; call: (index: number) => string };

/**
 * Output item ids carry their response's (`resp_<hex>` → `msg_<hex>`, `fc_<hex>_<i>`), so an
 * `item_reference` to one finds the stored response that holds it without an index of items.
 */
export function outputItemIds(responseId: string): OutputItemIds {
  const hex = responseId.slice('resp_'.length);
  return { message: `msg_${hex}`, call: (index) => `fc_${hex}_${index}` };
}

/** The response an output item id of ours belongs to, or undefined for any other id. */
export function responseIdOfItem(id: string): string | undefined {
  const match = /^(?:msg|fc)_([0-9a-f]{48})(?:_\d{1,3})?$/.exec(id);
  return match ? `resp_${match[1]}` : undefined;
}

/** The answer of a non-streamed chat completion. */
export function answerOf(chat: Record<string, unknown>): Answer {
  const choice = (chat.choices as Record<string, unknown>[] | undefined)?.[0] ?? {};
  const message = (choice.message as Record<string, unknown> | undefined) ?? {};
  const calls = ((message.tool_calls as Record<string, unknown>[] | undefined) ?? []).map((c) => {
    const fn = (c.function as { name?: string; arguments?: string } | undefined) ?? {};
    return { callId: String(c.id ?? itemId('call')), name: fn.name ?? '', arguments: fn.arguments ?? '' };
  });
  return {
    text: typeof message.content === 'string' ? message.content : '',
    calls,
    finish: String(choice.finish_reason ?? 'stop'),
    usage: chat.usage as ChatUsage | undefined,
  };
}

/** Responses usage from chat usage. */
export function usageOf(usage: ChatUsage | undefined): Record<string, unknown> | null {
  if (!usage) return null;
  return {
    input_tokens: usage.prompt_tokens,
    input_tokens_details: { cached_tokens: usage.prompt_tokens_details?.cached_tokens ?? 0 },
    output_tokens: usage.completion_tokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: usage.total_tokens ?? usage.prompt_tokens + usage.completion_tokens,
    ...(usage.cost !== undefined ? { cost: usage.cost } : {}),
  };
}

/** The message item holding `text`. */
export function messageItem(id: string, text: string, status = 'completed'): Record<string, unknown> {
  return {
    type: 'message',
    id,
    status,
    role: 'assistant',
    content: status === 'in_progress' ? [] : [{ type: 'output_text', text, annotations: [] }],
  };
}

/** The function_call item of one tool call. */
export function callItem(
  id: string,
  call: Answer['calls'][number],
  status = 'completed',
): Record<string, unknown> {
  return {
    type: 'function_call',
    id,
    call_id: call.callId,
    name: call.name,
    arguments: call.arguments,
    status,
  };
}

/** The output items of `answer`: the message when there is text (or nothing else), then the calls. */
export function outputOf(answer: Answer, ids: OutputItemIds): Record<string, unknown>[] {
  const items: Record<string, unknown>[] = [];
  if (answer.text !== '' || answer.calls.length === 0) items.push(messageItem(ids.message, answer.text));
  answer.calls.forEach((call, i) => {
    items.push(callItem(ids.call(i), call));
  });
  return items;
}

/**
 * The Response object: `in_progress` with no output while streaming, else completed (or
 * incomplete when max_output_tokens cut the answer) with its output and usage.
 */
export function responseObject(
  meta: ResponseMeta,
  done?: { answer: Answer; output: Record<string, unknown>[] },
): Record<string, unknown> {
  const { body } = meta;
  const cut = done?.answer.finish === 'length';
  const output = done?.output ?? [];
  return {
    id: meta.id,
    object: 'response',
    created_at: meta.createdAt,
    status: done ? (cut ? 'incomplete' : 'completed') : 'in_progress',
    // When it completed (unix seconds; null until then), as OpenAI and OpenRouter's SDK have it.
    completed_at: done ? Math.floor(meta.now() / 1000) : null,
    error: null,
    incomplete_details: cut ? { reason: 'max_output_tokens' } : null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model: body.model,
    output,
    output_text: output
      .flatMap((item) => (item.type === 'message' ? (item.content as { text: string }[]) : []))
      .map((c) => c.text)
      .join(''),
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    store: body.store !== false,
    temperature: body.temperature ?? 1,
    // Not taken by this API (nor OpenAI's): the nodes apply none (OpenRouter's SDK requires them).
    frequency_penalty: 0,
    presence_penalty: 0,
    // One tier of service here (a request's `service_tier` may say auto or default).
    service_tier: 'default',
    text: { format: body.text?.format ?? { type: 'text' } },
    tool_choice: body.tool_choice ?? 'auto',
    tools: (body.tools ?? []).map((t) => ({
      type: 'function',
      name: t.name,
      description: t.description ?? null,
      parameters: t.parameters ?? null,
      strict: t.strict ?? true,
    })),
    top_p: body.top_p ?? 1,
    truncation: 'disabled',
    usage: done ? usageOf(done.answer.usage) : null,
    user: body.user ?? null,
    metadata: body.metadata ?? {},
  };
}

/** The conversation after `answer`: what `previous_response_id` continues from. */
export function answerMessages(answer: Answer): Record<string, unknown>[] {
  return [
    {
      role: 'assistant',
      content: answer.text === '' && answer.calls.length > 0 ? null : answer.text,
      ...(answer.calls.length > 0
        ? {
            tool_calls: answer.calls.map((c) => ({
              id: c.callId,
              type: 'function',
              function: { name: c.name, arguments: c.arguments },
            })),
          }
        : {}),
    },
  ];
}
