/**
 * A Responses request as the chat completion a node serves: instructions as the system message,
 * the stored conversation of `previous_response_id`, then the input items — messages, function
 * calls (an assistant message's tool_calls) and their outputs (tool messages); tools, tool_choice,
 * text.format and max_output_tokens in their chat form.
 */
import { ApiError } from '../../errors.js';
import { MAX_MESSAGES } from '../schemas.js';
import type { InputItem, ResponsesBody } from './schemas.js';

export type ChatMessage = Record<string, unknown> & { role: string };

/** The conversation of `input` (no instructions): what a later response continues. */
export function inputMessages(input: ResponsesBody['input']): ChatMessage[] {
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  const out: ChatMessage[] = [];
  for (const item of input) {
    if (item.type === 'function_call') {
      const call = {
        id: item.call_id,
        type: 'function',
        function: { name: item.name, arguments: item.arguments },
      };
      // Calls one after another are one assistant turn, as a model makes them.
      const last = out.at(-1);
      if (last?.role === 'assistant' && Array.isArray(last.tool_calls)) last.tool_calls.push(call);
      else out.push({ role: 'assistant', content: null, tool_calls: [call] });
    } else if (item.type === 'function_call_output') {
      out.push({ role: 'tool', tool_call_id: item.call_id, content: item.output });
    } else if (item.type === 'item_reference') {
      // resolve-references.ts replaces them before the conversation is built.
      throw new ApiError('invalid_request', `The item_reference "${item.id}" was not resolved.`, {
        param: 'input',
      });
    } else {
      out.push({ role: item.role, content: textOf(item) });
    }
  }
  return out;
}

function textOf(item: Extract<InputItem, { role: string }>): string {
  return typeof item.content === 'string' ? item.content : item.content.map((p) => p.text).join('');
}

/**
 * OpenAI's rule: every function_call_output answers a function call made before it in the
 * conversation (the input's own function_call items or the previous response's calls); an unknown
 * `call_id` is 400 naming `input`, before anything reaches a node.
 */
function checkCallIds(messages: readonly ChatMessage[]): void {
  const calls = new Set<string>();
  for (const m of messages) {
    if (Array.isArray(m.tool_calls)) for (const c of m.tool_calls as { id: string }[]) calls.add(c.id);
    if (m.role === 'tool' && !calls.has(m.tool_call_id as string)) {
      throw new ApiError(
        'invalid_request',
        `No tool call found for function call output with call_id ${String(m.tool_call_id)}.`,
        { param: 'input' },
      );
    }
  }
}

/** The chat completion body for `body`, after `history` (the previous response's conversation). */
export function toChat(body: ResponsesBody, history: readonly ChatMessage[]): Record<string, unknown> {
  const messages: ChatMessage[] = [
    ...(body.instructions ? [{ role: 'system', content: body.instructions }] : []),
    ...history,
    ...inputMessages(body.input),
  ];
  checkCallIds(messages);
  if (messages.length > MAX_MESSAGES) {
    throw new ApiError(
      'invalid_request',
      `The conversation holds ${messages.length} messages; at most ${MAX_MESSAGES} fit one response.`,
      { param: body.previous_response_id ? 'previous_response_id' : 'input' },
    );
  }
  const chat: Record<string, unknown> = { model: body.model, messages };
  if (body.tools?.length) {
    chat.tools = body.tools.map((t) => ({
      type: 'function',
      function: {
        name: t.name,
        ...(t.description ? { description: t.description } : {}),
        parameters: t.parameters ?? { type: 'object', properties: {} },
        ...(t.strict != null ? { strict: t.strict } : {}),
      },
    }));
  }
  if (body.tool_choice !== undefined) {
    chat.tool_choice =
      typeof body.tool_choice === 'string'
        ? body.tool_choice
        : { type: 'function', function: { name: body.tool_choice.name } };
  }
  const format = body.text?.format;
  if (format?.type === 'json_object') chat.response_format = { type: 'json_object' };
  if (format?.type === 'json_schema') {
    chat.response_format = {
      type: 'json_schema',
      json_schema: {
        name: format.name,
        schema: format.schema,
        ...(format.description ? { description: format.description } : {}),
        ...(format.strict != null ? { strict: format.strict } : {}),
      },
    };
  }
  if (body.max_output_tokens != null) chat.max_tokens = body.max_output_tokens;
  if (body.temperature != null) chat.temperature = body.temperature;
  if (body.top_p != null) chat.top_p = body.top_p;
  if (body.user !== undefined) chat.user = body.user;
  if (body.provider !== undefined) chat.provider = body.provider;
  if (body.stream) {
    chat.stream = true;
    chat.stream_options = { include_usage: true };
  }
  return chat;
}
