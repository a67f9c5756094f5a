/**
 * The function-calling parts of a canary: tool definitions, tool calls in an assistant message of
 * the history, identifiers and argument JSON, each as long and as many as in the traffic shape.
 */
import { proseLine } from './canary-prose.js';
import { type Topic, wordOfLength } from './canary-sentence.js';
import { pick } from './seeded-random.js';
import type { ToolCallShape, ToolShape } from './traffic-shape.js';

const PARAM_TYPES = ['string', 'string', 'string', 'integer', 'number', 'boolean'];
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A snake_case identifier exactly `length` long (at least 1). */
export function identifierOf(length: number, topic: Topic, random: () => number): string {
  const parts: string[] = [];
  let left = Math.max(1, length);
  while (left > 12 || (parts.length === 0 && left > 6 && random() < 0.7)) {
    const width = Math.min(left - 2, 3 + Math.floor(random() * 6));
    parts.push(wordOfLength(width, topic, random));
    left -= width + 1;
  }
  parts.push(wordOfLength(left, topic, random));
  return parts
    .join('_')
    .toLowerCase()
    .replace(/[^a-z_]/g, '_');
}

/** An OpenAI-style tool call id (`call_` and 24 letters and digits). */
export function callIdOf(random: () => number): string {
  let id = 'call_';
  for (let i = 0; i < 24; i++) id += ALNUM[Math.floor(random() * ALNUM.length)];
  return id;
}

/** A tool definition shaped as `tool`. */
export function toolOf(tool: ToolShape, topic: Topic, random: () => number): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  const names: string[] = [];
  for (let i = 0; i < tool.params; i++) {
    let name = identifierOf(4 + Math.floor(random() * 9), topic, random);
    while (name in properties) name += 's';
    names.push(name);
    const type = pick(PARAM_TYPES, random);
    properties[name] =
      random() < 0.7
        ? { type, description: proseLine(15 + Math.floor(random() * 50), '', 'system', topic, random) }
        : { type };
  }
  const fn: Record<string, unknown> = { name: identifierOf(tool.name, topic, random) };
  if (tool.description > 0) fn.description = proseLine(tool.description, '.', 'system', topic, random);
  fn.parameters = { type: 'object', properties, required: names.slice(0, tool.required) };
  return { type: 'function', function: fn };
}

/** A tool call shaped as `call`, calling one of `names` (the canary's tools) when there are any. */
export function toolCallOf(
  call: ToolCallShape,
  names: readonly string[],
  topic: Topic,
  random: () => number,
): { id: string; type: 'function'; function: { name: string; arguments: string } } {
  const args: Record<string, unknown> = {};
  for (let i = 0; i < call.args; i++) args[identifierOf(3 + Math.floor(random() * 8), topic, random)] = '';
  // The values share out what is left of the JSON's length.
  const keys = Object.keys(args);
  let left = call.chars - JSON.stringify(args).length;
  keys.forEach((key, i) => {
    const width = i === keys.length - 1 ? left : Math.floor(left / (keys.length - i));
    args[key] = width > 0 ? proseLine(width, '', 'user', topic, random) : '';
    left -= Math.max(width, 0);
  });
  return {
    id: callIdOf(random),
    type: 'function',
    function: {
      name:
        names.length > 0 ? pick(names, random) : identifierOf(8 + Math.floor(random() * 10), topic, random),
      arguments: JSON.stringify(args),
    },
  };
}
