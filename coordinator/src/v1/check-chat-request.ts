import { ApiError } from '../errors.js';
import { checkJsonSchema } from './check-json-schema.js';
import { checkResponseFormat } from './check-response-format.js';

/** OpenAI's function names: what a node's tool grammar takes (node/src/runtimes/openai-shapes.ts). */
const FUNCTION_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const TOOL_CHOICES: readonly string[] = ['none', 'auto', 'required'];

/**
 * The chat request's rules that depend on the request alone, checked here so the client gets
 * OpenAI's 400 naming the member (`param`) instead of a node's refusal passed on without one:
 * `response_format` (check-response-format.ts); each tool message answers a call made before it;
 * tools are functions with a valid name, and `tool_choice` is none, auto, required or a function
 * that `tools` declares; and the JSON Schemas of the tools that are strict or may be forced, as the
 * nodes' grammar takes them (check-json-schema.ts). The members' types are the body schema's
 * (schemas.ts). A few property reads per request: nothing for a request without them.
 */
export function checkChatRequest(body: Record<string, unknown>): void {
  checkResponseFormat(body);
  if (Array.isArray(body.messages)) checkToolTurns(body.messages as Record<string, unknown>[]);
  const names = new Set<string>();
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) invalid("Invalid type for 'tools': expected an array.", 'tools');
    for (const [i, tool] of (body.tools as unknown[]).entries()) {
      const t = tool as { type?: unknown; function?: { name?: unknown } } | null;
      if (t?.type !== 'function')
        invalid(
          `Invalid value for 'tools[${i}].type': only 'function' tools are supported.`,
          `tools.${i}.type`,
        );
      const name = t.function?.name;
      if (typeof name !== 'string' || !FUNCTION_NAME.test(name))
        invalid(
          `Invalid 'tools[${i}].function.name': a string of 1 to 64 letters, digits, underscores or dashes.`,
          `tools.${i}.function.name`,
        );
      names.add(name);
    }
    for (const [i, tool] of (body.tools as { function: Record<string, unknown> }[]).entries()) {
      const { name, parameters, strict } = tool.function;
      // A strict tool's schema is OpenAI's promise whether or not it is called; another's is
      // grammar only when a call may be forced.
      if (parameters === undefined || (strict !== true && !mayBeForced(body.tool_choice, name))) continue;
      checkJsonSchema(
        parameters,
        strict === true,
        `tools.${i}.function.parameters`,
        `function '${String(name)}'`,
      );
    }
  }
  const choice = body.tool_choice;
  if (choice === undefined) return;
  if (typeof choice === 'string') {
    if (!TOOL_CHOICES.includes(choice))
      invalid(
        `Invalid value: '${choice}'. Supported values are: 'none', 'auto', 'required', or a named function.`,
        'tool_choice',
      );
    if (choice !== 'none' && names.size === 0)
      invalid(
        "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.",
        'tool_choice',
      );
    return;
  }
  const named = (choice as { type?: unknown; function?: { name?: unknown } } | null)?.function?.name;
  if ((choice as { type?: unknown } | null)?.type !== 'function' || typeof named !== 'string')
    invalid("Invalid 'tool_choice': expected 'none', 'auto', 'required' or a named function.", 'tool_choice');
  if (!names.has(named))
    invalid(`Tool choice 'function' named '${named}' not found in 'tools' parameter.`, 'tool_choice');
}

/**
 * OpenAI's rule for a conversation with tool results: each `tool` message carries the
 * `tool_call_id` of a call an earlier assistant message made (the Responses API's call_id rule,
 * responses/to-chat.ts, is the same one).
 */
function checkToolTurns(messages: readonly Record<string, unknown>[]): void {
  const calls = new Set<unknown>();
  for (const [i, m] of messages.entries()) {
    if (Array.isArray(m.tool_calls)) for (const c of m.tool_calls as { id?: unknown }[]) calls.add(c.id);
    if (m.role !== 'tool') continue;
    if (m.tool_call_id === undefined)
      invalid(
        `Missing parameter 'tool_call_id': messages[${i}] has role 'tool' and must name the call it answers.`,
        `messages.${i}.tool_call_id`,
      );
    if (!calls.has(m.tool_call_id))
      invalid(
        `Invalid parameter: messages[${i}] answers tool call '${String(m.tool_call_id)}', which no earlier assistant message made.`,
        `messages.${i}.tool_call_id`,
      );
  }
}

/** Whether `tool_choice` may force a call of the function `name` ("required", or naming it). */
function mayBeForced(choice: unknown, name: unknown): boolean {
  return (
    choice === 'required' || (choice as { function?: { name?: unknown } } | null)?.function?.name === name
  );
}

function invalid(message: string, param: string): never {
  throw new ApiError('invalid_request', message, { param });
}
