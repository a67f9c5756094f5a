/**
 * The agent-like workload of bench/prefix-cache.ts: conversations with one ~2,000-token system
 * prompt and six tool definitions (the same agent for all), each turn streamed through the openai
 * SDK, the history growing by the answer (prose or tool calls, with their results) and a user turn
 * that carries a tool's output, as an agent loop's does. Each turn notes its time to the first
 * token, its node and its usage as the client sees it.
 */
import type OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';

const fn = (name: string, description: string, properties: Record<string, unknown>): ChatCompletionTool => ({
  type: 'function',
  function: {
    name,
    description,
    parameters: { type: 'object', properties, required: Object.keys(properties) },
  },
});

/** The agent's tools, sent with every request (they are part of every prefix key). */
export const TOOLS: ChatCompletionTool[] = [
  fn('search_docs', 'Search the product documentation', { query: { type: 'string' } }),
  fn('read_file', 'Read a file of the repository', { path: { type: 'string' } }),
  fn('run_tests', 'Run the test suite of a package', { package: { type: 'string' } }),
  fn('get_weather', 'The weather in a city today', { city: { type: 'string' } }),
  fn('convert_units', 'Convert a quantity', {
    value: { type: 'number' },
    from: { type: 'string' },
    to: { type: 'string' },
  }),
  fn('create_ticket', 'Open a support ticket', { title: { type: 'string' }, priority: { type: 'string' } }),
];

const RULES = [
  'answer the user politely and keep every reply short',
  'check every number twice before you give it',
  'use a tool when the answer depends on data you do not have',
  'never invent the contents of a file you have not read',
  'quote the tool output you rely on, briefly',
  'say so plainly when a tool fails, and do not retry more than once',
  'prefer the documentation over memory when they disagree',
  'keep units with every quantity you state',
];

/** The agent's system prompt: numbered rules, ~2,000 tokens with the tools on mini-chat's tokenizer. */
export function systemPrompt(rules: number): string {
  return [
    'You are the support agent of a small software company. Follow these rules.',
    ...Array.from({ length: rules }, (_, i) => `Rule ${i + 1}: ${RULES[i % RULES.length]}.`),
  ].join('\n');
}

/**
 * What a user turn carries back to the agent: a tool's output — a one-line status (~100 tokens),
 * and at the steps in `reads` a file the agent read, `readLines` lines of a log (~38 tokens a line
 * on mini-chat's tokenizer). A coding or support agent reads a file or a page of search results,
 * then works on it over the following turns: its history soon outweighs the shared system prompt,
 * and only the node that served the conversation holds it.
 */
function toolOutput(
  conversation: string,
  step: number,
  reads: ReadonlySet<number>,
  readLines: number,
): string {
  const head = `Output of step ${step} (${conversation}): status ok, 3 results, first: "Install with npm ci, then run npm start; the node serves gpumesh/mini-chat on port 8080."`;
  const file = Array.from(
    { length: reads.has(step) ? readLines : 0 },
    (_, i) =>
      `${String(i + 1).padStart(3, ' ')}  ${conversation}.log step ${step}: request ${(i * 31) % 1000} took ${(i * 7 + step) % 90} ms`,
  );
  return [head, ...file, 'Next question: what should I do now?'].join('\n');
}

export type Turn = {
  conversation: string;
  turn: number;
  ttftMs: number;
  node: string;
  requestId: string;
  promptTokens: number;
  /** Cached tokens billed (usage.prompt_tokens_details.cached_tokens as the client sees it). */
  cachedTokens: number;
  /** The content of the request's last message (unique per turn): the key of the node's claim. */
  lastContent: string;
  /** Whether the answer was tool calls (held back while streaming: its first token comes at its end). */
  toolCalls: boolean;
  /** ms from sending to the answer's last chunk. */
  totalMs: number;
};

export type ConversationOptions = {
  client: OpenAI;
  model: string;
  system: string;
  conversation: string;
  turns: number;
  maxTokens: number;
  /** Waited before the first turn (conversations do not all start at once). */
  startDelayMs?: number;
  /** Waited after each turn before the next: the agent's tools running. */
  thinkMs?: (turn: number) => number;
  /** The steps (turns from 1) whose tool output carries a file of `readLines` lines (toolOutput); none by default. */
  reads?: ReadonlySet<number>;
  readLines?: number;
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs one conversation's turns one after another; the figures of each. */
export async function runConversation(options: ConversationOptions): Promise<Turn[]> {
  const { client, model, conversation } = options;
  const first = `(${conversation}) My install fails after npm ci. What should I check first?`;
  const messages: ChatCompletionMessageParam[] = [
    { role: 'system', content: options.system },
    { role: 'user', content: first },
  ];
  const turns: Turn[] = [];
  await sleep(options.startDelayMs ?? 0);
  for (let turn = 0; turn < options.turns; turn++) {
    if (turn > 0) await sleep(options.thinkMs?.(turn) ?? 0);
    const lastContent = messages.at(-1)!.content as string;
    const sentAt = performance.now();
    const { data: stream, response } = await client.chat.completions
      .create({
        model,
        messages,
        tools: TOOLS,
        max_tokens: options.maxTokens,
        temperature: 0,
        stream: true,
        stream_options: { include_usage: true },
      })
      .withResponse();
    let ttftMs: number | undefined;
    let content = '';
    const calls: { id: string; name: string; arguments: string }[] = [];
    let usage: OpenAI.CompletionUsage | undefined;
    let requestId = '';
    for await (const chunk of stream) {
      requestId = chunk.id;
      if (chunk.usage) usage = chunk.usage;
      const delta = chunk.choices[0]?.delta;
      if (!delta) continue;
      if (ttftMs === undefined && (delta.content || delta.tool_calls?.length))
        ttftMs = performance.now() - sentAt;
      content += delta.content ?? '';
      for (const call of delta.tool_calls ?? []) {
        calls[call.index] ??= { id: '', name: '', arguments: '' };
        const at = calls[call.index]!;
        at.id ||= call.id ?? '';
        at.name += call.function?.name ?? '';
        at.arguments += call.function?.arguments ?? '';
      }
    }
    if (!usage) throw new Error(`${conversation} turn ${turn}: no usage in the stream`);
    turns.push({
      conversation,
      turn,
      ttftMs: ttftMs ?? performance.now() - sentAt,
      node: (response.headers.get('x-gpumesh-node') ?? '').toLowerCase(),
      requestId,
      promptTokens: usage.prompt_tokens,
      cachedTokens: usage.prompt_tokens_details?.cached_tokens ?? 0,
      lastContent,
      toolCalls: calls.length > 0,
      totalMs: performance.now() - sentAt,
    });
    // The history grows as an agent's does: the answer, the tools' results, the next user turn.
    if (calls.length > 0) {
      messages.push({
        role: 'assistant',
        content: content || null,
        tool_calls: calls.map((c, i) => ({
          id: c.id || `call_${turn}_${i}`,
          type: 'function' as const,
          function: { name: c.name, arguments: c.arguments },
        })),
      });
      calls.forEach((c, i) => {
        messages.push({ role: 'tool', tool_call_id: c.id || `call_${turn}_${i}`, content: '{"ok":true}' });
      });
    } else messages.push({ role: 'assistant', content });
    messages.push({
      role: 'user',
      content: toolOutput(conversation, turn + 1, options.reads ?? new Set(), options.readLines ?? 0),
    });
  }
  return turns;
}
