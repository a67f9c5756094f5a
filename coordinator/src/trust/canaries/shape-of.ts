/**
 * The shape of one client chat or completion request, as the node receives it (traffic-shape.ts):
 * what a canary must reproduce to look like it, and nothing a client wrote. Numbers and booleans
 * are copied (sampling settings are not text); strings only for the enum members below; any
 * other member holding text or objects is left out of the shape.
 */
import { textShapeOf } from './text-shape.js';
import type {
  MessageShape,
  Scalar,
  TextShape,
  ToolCallShape,
  ToolShape,
  TrafficShape,
} from './traffic-shape.js';

/** Messages recorded at most: a system message first, then the last ones. */
export const MAX_MESSAGES_PER_SHAPE = 64;
/** Tools recorded at most. */
const MAX_TOOLS = 64;
/** Stop sequences the API takes at most (schemas.ts). */
const MAX_STOPS = 4;

/** Members whose string value is an enum of the API, copied as is when it reads like one. */
const ENUM_MEMBERS: ReadonlySet<string> = new Set([
  'tool_choice',
  'reasoning_effort',
  'service_tier',
  'verbosity',
]);
const ENUM_VALUE = /^[a-z][a-z0-9_-]{0,31}$/;
/** Members of a message a canary reproduces; others are left out. */
const MESSAGE_MEMBERS: ReadonlySet<string> = new Set([
  'role',
  'content',
  'name',
  'tool_calls',
  'tool_call_id',
]);
const ROLE = /^[a-z_]{1,20}$/;

/**
 * Stop sequences of public prompt formats: structure, not anyone's words, so recorded as they are;
 * a canary standing for another takes one of these of its length, else a word and a colon.
 */
export const KNOWN_STOPS: readonly string[] = [
  '\n',
  '.',
  '}',
  '\n\n',
  'Q:',
  'A:',
  '###',
  '```',
  '---',
  'END',
  '\nQ:',
  '</s>',
  'STOP',
  '\n###',
  'User:',
  '<end>',
  'Human:',
  '\nUser:',
  '<|end|>',
  '\nHuman:',
  '<|user|>',
  'Question:',
  '</answer>',
  '<|im_end|>',
  '<|eot_id|>',
  'Assistant:',
  'Observation:',
  '\nAssistant:',
  '<|endoftext|>',
  'Final Answer:',
  '\nObservation:',
];

type Keyer = (text: string) => number;

/**
 * The shape of `request` (a node request of kind `kind`), or undefined when it is not a chat or
 * completion request a canary could mirror.
 */
export function shapeOf(
  kind: string,
  request: Record<string, unknown>,
  stream: boolean,
  keyOf: Keyer,
): TrafficShape | undefined {
  if (kind !== 'chat' && kind !== 'completion') return undefined;
  if (kind === 'chat' && !Array.isArray(request.messages)) return undefined;
  if (kind === 'completion' && typeof request.prompt !== 'string') return undefined;
  const members: string[] = [];
  const values: Record<string, Scalar> = {};
  const shape: { -readonly [K in keyof TrafficShape]: TrafficShape[K] } = { kind, stream, members, values };
  for (const [member, value] of Object.entries(request)) {
    if (value === undefined || value === null) continue;
    if (member === 'model') members.push(member);
    else if (member === 'messages' && kind === 'chat') {
      shape.messages = messagesOf(value as unknown[], keyOf);
      members.push(member);
    } else if (member === 'prompt' && kind === 'completion') {
      shape.prompt = textShapeOf(value as string, keyOf);
      members.push(member);
    } else if (member === 'stop') {
      const stop = stopOf(value, keyOf);
      if (stop) {
        shape.stop = stop;
        members.push(member);
      }
    } else if (member === 'tools' && Array.isArray(value)) {
      shape.tools = value.slice(0, MAX_TOOLS).map((tool) => toolOf(tool, keyOf));
      members.push(member);
    } else if (member === 'tool_choice' && typeof value === 'object') {
      shape.namedToolChoice = true;
      members.push(member);
    } else if (member === 'response_format' && typeof value === 'object') {
      const format = responseFormatOf(value as Record<string, unknown>, keyOf);
      if (format) {
        shape.responseFormat = format;
        members.push(member);
      }
    } else if (typeof value === 'number' || typeof value === 'boolean') {
      values[member] = value;
      members.push(member);
    } else if (typeof value === 'string' && ENUM_MEMBERS.has(member) && ENUM_VALUE.test(value)) {
      values[member] = value;
      members.push(member);
    }
  }
  return shape;
}

function messagesOf(messages: unknown[], keyOf: Keyer): MessageShape[] {
  let kept = messages;
  if (messages.length > MAX_MESSAGES_PER_SHAPE) {
    const first = messages[0] as { role?: unknown } | undefined;
    const system = first?.role === 'system' || first?.role === 'developer';
    kept = system
      ? [first, ...messages.slice(messages.length - MAX_MESSAGES_PER_SHAPE + 1)]
      : messages.slice(messages.length - MAX_MESSAGES_PER_SHAPE);
  }
  return kept.map((m) => messageOf((m ?? {}) as Record<string, unknown>, keyOf));
}

function messageOf(message: Record<string, unknown>, keyOf: Keyer): MessageShape {
  const role = typeof message.role === 'string' && ROLE.test(message.role) ? message.role : 'user';
  const name = typeof message.name === 'string' ? message.name : '';
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls : undefined;
  const shape: { -readonly [K in keyof MessageShape]: MessageShape[K] } = {
    role,
    members: Object.keys(message).filter((m) => MESSAGE_MEMBERS.has(m)),
    // Seeds the message's generated name and tool call ids: the same for the same message.
    key: keyOf(`${role}\u0000${name}\u0000${calls ? JSON.stringify(calls) : ''}`),
  };
  const content = message.content;
  if (typeof content === 'string') shape.content = { form: 'string', text: textShapeOf(content, keyOf) };
  else if (Array.isArray(content)) {
    const parts: TextShape[] = [];
    for (const part of content) {
      const text = (part as { type?: unknown; text?: unknown } | null)?.text;
      if ((part as { type?: unknown } | null)?.type === 'text' && typeof text === 'string')
        parts.push(textShapeOf(text, keyOf));
    }
    shape.content = { form: 'parts', parts };
  } else if (content === null) shape.content = { form: 'null' };
  if (typeof message.name === 'string') shape.name = message.name.length;
  if (calls) shape.toolCalls = calls.map(toolCallOf);
  return shape;
}

function toolCallOf(call: unknown): ToolCallShape {
  const args = (call as { function?: { arguments?: unknown } } | null)?.function?.arguments;
  if (typeof args !== 'string') return { args: 0, chars: 2 };
  let members = 0;
  try {
    const parsed = JSON.parse(args) as unknown;
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) members = Object.keys(parsed).length;
  } catch {
    // Not JSON: a call with no members of the same length.
  }
  return { args: members, chars: args.length };
}

function toolOf(tool: unknown, keyOf: Keyer): ToolShape {
  const fn = (tool as { function?: Record<string, unknown> } | null)?.function ?? {};
  const parameters = (fn.parameters ?? {}) as { properties?: unknown; required?: unknown };
  const properties =
    parameters.properties && typeof parameters.properties === 'object' ? parameters.properties : {};
  return {
    name: typeof fn.name === 'string' ? fn.name.length : 0,
    description: typeof fn.description === 'string' ? fn.description.length : 0,
    params: Object.keys(properties).length,
    required: Array.isArray(parameters.required) ? parameters.required.length : 0,
    key: keyOf(JSON.stringify(tool)),
  };
}

function stopOf(value: unknown, keyOf: Keyer): TrafficShape['stop'] {
  const item = (s: string) => ({
    chars: s.length,
    key: keyOf(s),
    ...(KNOWN_STOPS.includes(s) ? { text: s } : {}),
  });
  if (typeof value === 'string') return { list: false, items: [item(value)] };
  if (!Array.isArray(value)) return undefined;
  const items = value
    .filter((s): s is string => typeof s === 'string')
    .slice(0, MAX_STOPS)
    .map(item);
  return { list: true, items };
}

function responseFormatOf(format: Record<string, unknown>, keyOf: Keyer): TrafficShape['responseFormat'] {
  if (typeof format.type !== 'string' || !ENUM_VALUE.test(format.type)) return undefined;
  const schema = (format.json_schema as { schema?: { properties?: unknown } } | undefined)?.schema;
  const properties = schema?.properties && typeof schema.properties === 'object' ? schema.properties : {};
  return {
    type: format.type,
    properties: Object.keys(properties).length,
    key: keyOf(JSON.stringify(format)),
  };
}
