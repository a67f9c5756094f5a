/**
 * A canary job a node can't tell from the model's traffic (issue 29): a recorded traffic shape of
 * the model (traffic-shapes.ts), picked at random so canaries come in the traffic's proportions,
 * rebuilt member by member — the same kind, stream flag, members in the same order, the same
 * sampling values, texts of the same lines and lengths — with freshly generated words
 * (canary-text.ts): walked from the traffic's own k-anonymous phrases once they are learnt
 * (traffic-phrases.ts), from templates before. With no traffic recorded for the model, a shape of the default mix
 * (default-shape.ts). The request is what the node receives (the router's node request: no
 * `stream`, `max_tokens` always set), valid for the /v1 schemas.
 *
 * Values are copied as recorded, max_tokens too (the router's maxTokensCap bounds it already): a
 * lower cap for canaries would mark them, and leave a node free to cheat above it.
 */

import { topicOf } from './canary-sentence.js';
import { registerOf } from './canary-templates.js';
import { canaryText, type TextSources } from './canary-text.js';
import { callIdOf, identifierOf, toolCallOf, toolOf } from './canary-tools.js';
import { defaultShape } from './default-shape.js';
import { KNOWN_STOPS } from './shape-of.js';
import type { MessageShape, TrafficShape } from './traffic-shape.js';
import type { TrafficShapes } from './traffic-shapes.js';

export type Canary = { kind: 'chat' | 'completion'; stream: boolean; request: Record<string, unknown> };

export type MakeCanaryOptions = {
  /**
   * `max_tokens` of a default-mix canary: what the router sets for a client that names none
   * (min(router.maxTokensCap, the model's context)). DEFAULT_ROUTER_MAX_TOKENS_CAP by default.
   */
  defaultMaxTokens?: number;
  /**
   * Shapes with more text than this (characters, all texts together) are passed over. Every cap is
   * a tell — a node may cheat on jobs above it and meet no canary there — so it is generous.
   */
  maxTextChars?: number;
};

/** Text a canary carries at most by default (characters). */
export const DEFAULT_MAX_CANARY_TEXT_CHARS = 65_536;
/** Draws of a recorded shape before falling back to the default mix. */
const SAMPLE_TRIES = 8;

/** A canary for `model`, shaped as its recorded traffic (see the file's comment). */
export function makeCanary(
  shapes: TrafficShapes,
  model: string,
  random: () => number,
  options: MakeCanaryOptions = {},
): Canary {
  const limit = options.maxTextChars ?? DEFAULT_MAX_CANARY_TEXT_CHARS;
  let shape: TrafficShape | undefined;
  for (let i = 0; i < SAMPLE_TRIES && !shape; i++) {
    const drawn = shapes.take(model, random);
    if (!drawn) break;
    if (textChars(drawn) <= limit) shape = drawn;
  }
  shape ??= defaultShape(random, options.defaultMaxTokens);
  const sources: TextSources = {
    random,
    sharedRandom: (key) => shapes.sharedRandom(model, key),
    topic: { ...topicOf(random), traffic: shapes.phrases(model), novel: shapes.novelty(model) },
    recall: (key, make) => shapes.recall(model, key, make),
  };
  return { kind: shape.kind, stream: shape.stream, request: requestOf(shape, model, sources) };
}

function requestOf(shape: TrafficShape, model: string, sources: TextSources): Record<string, unknown> {
  const request: Record<string, unknown> = {};
  const tools = (shape.tools ?? []).map((tool) => {
    const seeded = sources.sharedRandom(tool.key);
    if (!seeded) return toolOf(tool, sources.topic, sources.random);
    // An app's recurring tool: made once, then the same in every canary (recall).
    const topic = { ...topicOf(seeded), traffic: sources.topic.traffic };
    const made = sources.recall(tool.key, () => JSON.stringify(toolOf(tool, topic, seeded)));
    return JSON.parse(made) as Record<string, unknown>;
  });
  const toolNames = tools.map((t) => (t.function as { name: string }).name);
  for (const member of shape.members) {
    switch (member) {
      case 'model':
        request.model = model;
        break;
      case 'messages':
        request.messages = messagesOf(shape.messages ?? [], toolNames, sources);
        break;
      case 'prompt':
        request.prompt = canaryText(shape.prompt ?? [], 'prompt', sources);
        break;
      case 'stop': {
        const stops = (shape.stop?.items ?? []).map(
          (s) => s.text ?? stopOf(s.chars, sources.sharedRandom(s.key) ?? sources.random, sources),
        );
        request.stop = shape.stop?.list ? stops : (stops[0] ?? '\n');
        break;
      }
      case 'tools':
        request.tools = tools;
        break;
      case 'tool_choice':
        request.tool_choice = shape.namedToolChoice
          ? {
              type: 'function',
              function: { name: toolNames[0] ?? identifierOf(12, sources.topic, sources.random) },
            }
          : shape.values.tool_choice;
        break;
      case 'response_format':
        if (shape.responseFormat) request.response_format = responseFormatOf(shape.responseFormat, sources);
        break;
      default:
        if (shape.values[member] !== undefined) request[member] = shape.values[member];
    }
  }
  return request;
}

function messagesOf(
  messages: readonly MessageShape[],
  toolNames: readonly string[],
  sources: TextSources,
): Record<string, unknown>[] {
  // Tool messages answer the calls before them: their ids are the calls' ids, in order.
  const pendingCalls: string[] = [];
  return messages.map((m) => {
    const seeded = sources.sharedRandom(m.key);
    const random = seeded ?? sources.random;
    const topic = seeded ? topicOf(seeded) : sources.topic;
    const register = registerOf(m.role);
    const message: Record<string, unknown> = {};
    for (const member of m.members) {
      if (member === 'role') message.role = m.role;
      else if (member === 'content' && m.content) {
        const content = m.content;
        message.content =
          content.form === 'string'
            ? canaryText(content.text, register, sources)
            : content.form === 'parts'
              ? content.parts.map((part) => ({ type: 'text', text: canaryText(part, register, sources) }))
              : null;
      } else if (member === 'name' && m.name !== undefined)
        message.name = identifierOf(m.name, topic, random);
      else if (member === 'tool_calls' && m.toolCalls) {
        const calls = m.toolCalls.map((call) => toolCallOf(call, toolNames, topic, random));
        pendingCalls.push(...calls.map((c) => c.id));
        message.tool_calls = calls;
      } else if (member === 'tool_call_id') message.tool_call_id = pendingCalls.shift() ?? callIdOf(random);
    }
    // A message must have a role and content (schemas.ts): a shape always recorded both or a role.
    message.role ??= m.role;
    if (!('content' in message)) message.content = m.role === 'assistant' ? null : '';
    return message;
  });
}

function stopOf(chars: number, random: () => number, sources: TextSources): string {
  const fits = KNOWN_STOPS.filter((s) => s.length === chars);
  if (fits.length > 0) return fits[Math.floor(random() * fits.length)]!;
  const word = identifierOf(Math.max(1, chars - 2), sources.topic, random);
  const label = `\n${word.charAt(0).toUpperCase()}${word.slice(1)}:`;
  return label.slice(0, Math.max(1, Math.min(chars, 256)));
}

function responseFormatOf(
  format: NonNullable<TrafficShape['responseFormat']>,
  sources: TextSources,
): Record<string, unknown> {
  if (format.type !== 'json_schema') return { type: format.type };
  const random = sources.sharedRandom(format.key) ?? sources.random;
  const topic = random === sources.random ? sources.topic : topicOf(random);
  const properties: Record<string, unknown> = {};
  for (let i = 0; i < format.properties; i++) {
    let name = identifierOf(4 + Math.floor(random() * 9), topic, random);
    while (name in properties) name += 's';
    properties[name] = { type: random() < 0.7 ? 'string' : random() < 0.5 ? 'number' : 'boolean' };
  }
  return {
    type: 'json_schema',
    json_schema: {
      name: identifierOf(6 + Math.floor(random() * 12), topic, random),
      strict: true,
      schema: { type: 'object', properties, required: Object.keys(properties), additionalProperties: false },
    },
  };
}

/** All the text a shape's canary will carry, in characters. */
function textChars(shape: TrafficShape): number {
  let chars = 0;
  const text = (lines: readonly { chars: number }[]) => {
    for (const line of lines) chars += line.chars + 1;
  };
  for (const m of shape.messages ?? []) {
    if (m.content?.form === 'string') text(m.content.text);
    if (m.content?.form === 'parts') for (const part of m.content.parts) text(part);
  }
  if (shape.prompt) text(shape.prompt);
  return chars;
}
