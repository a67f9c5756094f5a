/**
 * Tool calls a model makes on its own (`tool_choice` "auto", or absent, with tools listed): the
 * answer form the tools' system turn asks for (tool-signature.ts) — only a JSON array of
 * `{"name", "arguments"}` — parsed back into OpenAI's tool calls. An answer that begins with "[" is
 * held back while streaming (it may be calls); any other answer streams as it comes. When a listed
 * tool is strict, the answer is sampled under a grammar (json-grammars.ts `forAutoCalls`): prose, or
 * calls whose arguments hold to a strict tool's parameters — an answer that begins `[{` is calls.
 */
import { randomBytes } from 'node:crypto';
import type { ChatRequest, ToolCallOut } from '../openai-shapes.js';
import type { GrammarTool } from './json-grammars.js';
import type { TokenLogprob } from './token-logprobs.js';

/** The tool names a model may call on its own here, or undefined when it may not. */
export function autoToolNames(request: ChatRequest): Set<string> | undefined {
  const tools = request.tools ?? [];
  const choice = request.tool_choice;
  if (tools.length === 0 || (choice !== undefined && choice !== 'auto')) return undefined;
  return new Set(tools.map((t) => t.function.name));
}

/**
 * The tools a model may call on its own when one of them is strict (`function.strict: true`): then
 * its answer is sampled under the grammar of prose or calls. Undefined when none is strict (the
 * answer is free text, parsed back) or no call may be made on its own.
 */
export function strictAutoTools(request: ChatRequest): GrammarTool[] | undefined {
  const tools = request.tools ?? [];
  if (!autoToolNames(request) || !tools.some((t) => t.function.strict === true)) return undefined;
  return tools.map((tool, index) => ({
    index,
    name: tool.function.name,
    parameters: tool.function.parameters,
    strict: tool.function.strict === true,
  }));
}

/**
 * The calls an answer makes: a JSON array (alone in the answer) of objects naming a listed tool
 * with object arguments — or undefined, and the answer is text. `parallel_tool_calls: false`
 * keeps the first call.
 */
export function parseToolCalls(text: string, names: Set<string>, parallel = true): ToolCallOut[] | undefined {
  const trimmed = text.trim();
  if (!trimmed.startsWith('[')) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(trimmed);
  } catch {
    return undefined;
  }
  if (!Array.isArray(parsed) || parsed.length === 0) return undefined;
  const calls: ToolCallOut[] = [];
  for (const item of parsed) {
    const call = item as { name?: unknown; arguments?: unknown };
    if (typeof call !== 'object' || call === null || typeof call.name !== 'string') return undefined;
    if (!names.has(call.name)) return undefined;
    const args = call.arguments ?? {};
    if (typeof args !== 'object' || args === null || Array.isArray(args)) return undefined;
    calls.push({
      id: `call_${randomBytes(12).toString('hex')}`,
      type: 'function',
      function: { name: call.name, arguments: JSON.stringify(args) },
    });
  }
  return parallel ? calls : calls.slice(0, 1);
}

type Piece = { text: string; tokens: number; logprobs?: TokenLogprob[] };
type Send = (text: string, tokens: number, logprobs?: TokenLogprob[]) => void;

/** Streams text at once unless it begins with "[", which is held until the answer ends. */
export class AutoCallGate {
  #mode: 'undecided' | 'text' | 'held' = 'undecided';
  #held: Piece[] = [];
  readonly #send: Send;

  constructor(send: Send) {
    this.#send = send;
  }

  push(text: string, tokens: number, logprobs?: TokenLogprob[]): void {
    if (this.#mode === 'text') {
      this.#send(text, tokens, logprobs);
      return;
    }
    this.#held.push({ text, tokens, ...(logprobs ? { logprobs } : {}) });
    if (this.#mode === 'held') return;
    const start = this.#held
      .map((p) => p.text)
      .join('')
      .trimStart();
    if (start.length === 0) return;
    if (start.startsWith('[')) this.#mode = 'held';
    else this.flush();
  }

  /** The held text sent as text (the answer was not calls), after which text streams at once. */
  flush(): void {
    this.#mode = 'text';
    for (const p of this.#held) this.#send(p.text, p.tokens, p.logprobs);
    this.#held = [];
  }

  /** Tokens held back (counted in the calls' chunks when the answer was calls). */
  heldTokens(): number {
    return this.#held.reduce((sum, p) => sum + p.tokens, 0);
  }
}
