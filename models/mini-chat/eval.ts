/**
 * The mini-chat evaluation: the held-out conversations (data.py's test set, which training never
 * saw) answered through the node daemon's own runtime (createLlamaRuntime: the chat template, the
 * tool rendering and parsing, the sampler a paid request uses), at temperature 0, without any
 * grammar; then generation speed.
 *
 *   eval.ts --model models/mini-chat/gpumesh-mini-chat-Q8_0.gguf --data .train/test.jsonl [--limit N] [--all-failures]
 *
 * Figures (printed as JSON):
 * - exact: answers with one right value (arithmetic, conversions, dates, lookups, a tool's result,
 *   a later turn) that state it — in their last clause, for those checked by value; apart, those
 *   whose prompt fits the 256-token training window and those past it;
 * - endOfTurn: answers that end with the end-of-turn token (finish_reason stop or tool_calls, not
 *   length);
 * - jsonValid: JSON answers (no response_format, so no grammar) that parse and follow the schema
 *   the prompt gave (types, required keys, no others); jsonExact: with the prompt's values;
 * - toolCalls: tool-call answers with the right tools and arguments;
 * - tokensPerSecond: a 128-token answer's sampling speed, one sequence, one thread.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { getLlama } from 'node-llama-cpp';
import { createLlamaRuntime } from '../../node/src/runtimes/llama/llama-runtime.js';
import type { JsonObject } from '../../node/src/runtimes/runtime.js';

const { values } = parseArgs({
  options: {
    model: { type: 'string' },
    data: { type: 'string' },
    limit: { type: 'string' },
    /** Every failure, not the first 12 (to count them by kind). */
    'all-failures': { type: 'boolean', default: false },
  },
});

type Check =
  | { value: string }
  | { contains: string }
  | { json: { schema: JsonSchema; value: Record<string, unknown> } }
  | { tool_calls: { name: string; arguments: Record<string, unknown> }[] }
  | { prose: true };
type JsonSchema = { properties: Record<string, { type: string }>; required: string[] };
type Conversation = { task: string; messages: JsonObject[]; tools?: JsonObject[]; check: Check };

const conversations = readFileSync(values.data!, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l) as Conversation)
  .slice(0, values.limit ? Number(values.limit) : undefined);

const llama = await getLlama({ gpu: false });
const runtime = createLlamaRuntime({
  llama,
  threads: 1,
  models: [{ id: 'mini', path: values.model!, maxConcurrency: 1, contextLength: 8192 }],
});
await runtime.load();

const tally = new Map<string, { right: number; of: number }>();
const count = (what: string, right: boolean) => {
  const t = tally.get(what) ?? { right: 0, of: 0 };
  t.of++;
  if (right) t.right++;
  tally.set(what, t);
};
const failures: unknown[] = [];
/** train.py's --seq: the tokens of one training window, from a conversation's start. */
const TRAINING_WINDOW = 256;

for (const c of conversations) {
  const response = (await runtime.run({
    kind: 'chat',
    model: 'mini',
    stream: false,
    request: {
      messages: c.messages,
      ...(c.tools ? { tools: c.tools } : {}),
      temperature: 0,
      max_tokens: 256,
    },
  })) as JsonObject;
  const choice = (response.choices as JsonObject[])[0]!;
  const message = choice.message as {
    content: string | null;
    tool_calls?: { function: { name: string; arguments: string } }[];
  };
  const finish = choice.finish_reason as string;
  const text = message.content ?? '';
  count('endOfTurn', finish === 'stop' || finish === 'tool_calls');
  const check = c.check;
  let right = false;
  // Exact answers apart by where the prompt ends: training windows are TRAINING_WINDOW tokens
  // (train.py --seq), so an answer past them is at positions the model never learned.
  const promptTokens = (response.usage as { prompt_tokens: number }).prompt_tokens;
  const window = promptTokens < TRAINING_WINDOW ? 'exactPromptInWindow' : 'exactPromptPastWindow';
  if ('value' in check) {
    right = statesValue(finalClause(text), check.value);
    count('exact', right);
    count(window, right);
  } else if ('contains' in check) {
    right = text.includes(check.contains) || statesValue(text, check.contains);
    count('exact', right);
    count(window, right);
  } else if ('json' in check) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {}
    right = followsSchema(parsed, check.json.schema);
    count('jsonValid', right);
    count('jsonExact', right && sameJson(parsed, check.json.value));
  } else if ('tool_calls' in check) {
    const got = (message.tool_calls ?? []).map((t) => ({
      name: t.function.name,
      arguments: JSON.parse(t.function.arguments) as unknown,
    }));
    right = sameJson(got, check.tool_calls);
    count('toolCalls', right);
  } else {
    right = finish === 'stop';
  }
  if (!right && (values['all-failures'] || failures.length < 12))
    failures.push({
      task: c.task,
      last: c.messages.at(-1),
      promptTokens,
      text,
      tool_calls: message.tool_calls,
      finish,
    });
}

// Speed: a 128-token answer, the end of turn banned so that it runs its length.
const eos = String(llama ? 4 : 4);
let tokens = 0;
const began = performance.now();
for (let i = 0; i < 3; i++) {
  const r = (await runtime.run({
    kind: 'chat',
    model: 'mini',
    stream: false,
    request: {
      messages: [{ role: 'user', content: 'Write a sentence about a red fox.' }],
      max_tokens: 128,
      temperature: 0.7,
      seed: i,
      logit_bias: { [eos]: -100 },
    },
  })) as { usage: { completion_tokens: number } };
  tokens += r.usage.completion_tokens;
}
const tokensPerSecond = Math.round(tokens / ((performance.now() - began) / 1000));
await runtime.close();

const figures = Object.fromEntries(
  [...tally].map(([k, t]) => [k, { ...t, share: Number((t.right / t.of).toFixed(4)) }]),
);
console.log(
  JSON.stringify(
    { model: values.model, conversations: conversations.length, ...figures, tokensPerSecond, failures },
    null,
    1,
  ),
);

/**
 * The answer's last clause, where its value stands: "so 76 + 89 = 165." of a sum worked column by
 * column, "Omar's favorite color is red." after the table row it copied. A value that appears only
 * in a step or in the copied row does not count.
 */
function finalClause(text: string): string {
  const pieces = text.split(/;|\n|[.,](?=\s)/).filter((p) => p.trim() !== '');
  return pieces.at(-1) ?? '';
}

/** The answer states the value as a whole word or number ("42" in "12 + 30 = 42." but not in "142"). */
function statesValue(text: string, value: string): boolean {
  const escaped = value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(^|[^0-9A-Za-z])${escaped}([^0-9A-Za-z]|$)`).test(text);
}

function followsSchema(value: unknown, schema: JsonSchema): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const object = value as Record<string, unknown>;
  for (const key of Object.keys(object)) if (!(key in schema.properties)) return false;
  for (const key of schema.required) if (!(key in object)) return false;
  return Object.entries(object).every(([key, v]) => {
    const type = schema.properties[key]!.type;
    if (type === 'integer') return Number.isInteger(v);
    if (type === 'number') return typeof v === 'number';
    return typeof v === type;
  });
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(sortKeys(a)) === JSON.stringify(sortKeys(b));
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (typeof v === 'object' && v !== null)
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]),
    );
  return v;
}
