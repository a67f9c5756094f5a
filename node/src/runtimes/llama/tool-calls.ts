/**
 * Forced tool calls (tool_choice "required" or a named function): sampled as the JSON
 * `{"name", "arguments"}` under a grammar of the calls' shape, streamed as OpenAI streams them —
 * the call's id and name once the name is sampled, then argument deltas as they are generated —
 * and answered as OpenAI does when max_tokens cuts the call: the partial arguments, finish_reason
 * "length" (not an error).
 */
import { randomBytes } from 'node:crypto';
import { NodeError } from '../../errors.js';
import { type ChatRequest, type ChoiceText, chatChunk, type FinishReason } from '../openai-shapes.js';
import type { JsonObject, RuntimeJob } from '../runtime.js';
import type { GrammarTool } from './json-grammars.js';

/**
 * The functions a forced tool call may name — the named one, or any listed one for "required" —
 * with the call's name when there is one; undefined when no call is forced ("auto" and "none"
 * answer in text; see node/README.md). The call is sampled as `{"name", "arguments"}` under the
 * grammar of their parameters (json-grammars.ts).
 */
export function forcedTools(request: ChatRequest): { tools: GrammarTool[]; name?: string } | undefined {
  const tools = request.tools ?? [];
  const choice = request.tool_choice;
  if (tools.length === 0 || choice === undefined || choice === 'none' || choice === 'auto') return undefined;
  const wanted = tools
    .map((tool, index) => ({
      index,
      name: tool.function.name,
      parameters: tool.function.parameters,
      strict: tool.function.strict === true,
    }))
    .filter((tool) => typeof choice !== 'object' || tool.name === choice.function.name);
  if (wanted.length === 0) {
    throw new NodeError('invalid_request', {
      detail: `tool_choice names ${(choice as { function: { name: string } }).function.name}, which tools does not list.`,
    });
  }
  return { tools: wanted, ...(wanted.length === 1 ? { name: wanted[0]!.name } : {}) };
}

type Meta = { id: string; model: string; created: number };

/** The call's JSON up to its arguments' first character: `{"name": "…", "arguments": `. */
const HEAD = /^\s*\{\s*"name"\s*:\s*("(?:[^"\\]|\\.)*")\s*,\s*"arguments"\s*:\s*/;
/** What may be the call object's own closing brace at the end of the text so far. */
const TAIL = /\s*\}\s*$/;

/**
 * The sampled call's text as it comes: the head (id and name) once the name is complete, then
 * the arguments as deltas — all but a trailing brace, which may be the call object's own. Each
 * chunk carries the choice's `index` (n > 1: one stream per choice).
 */
export class ToolCallStream {
  readonly id = `call_${randomBytes(12).toString('hex')}`;
  #text = '';
  #name: string | undefined;
  #argumentsAt = -1;
  #sent = -1;
  #tokens = 0;
  readonly #meta: Meta;
  readonly #emit: RuntimeJob['onChunk'];
  readonly #index: number;

  constructor(meta: Meta, emit: RuntimeJob['onChunk'], index = 0) {
    this.#meta = meta;
    this.#emit = emit;
    this.#index = index;
  }

  push(text: string, tokens: number): void {
    this.#text += text;
    this.#tokens += tokens;
    if (this.#argumentsAt < 0) {
      const head = HEAD.exec(this.#text);
      if (!head) return;
      this.#name = JSON.parse(head[1]!) as string;
      this.#argumentsAt = head[0].length;
      this.#sent = this.#argumentsAt;
      const call = { index: 0, id: this.id, type: 'function', function: { name: this.#name, arguments: '' } };
      this.#send({ role: 'assistant', content: null, tool_calls: [call] });
    }
    const end = this.#text.length - (TAIL.exec(this.#text)?.[0].length ?? 0);
    if (end > this.#sent) {
      this.#send({ tool_calls: [{ index: 0, function: { arguments: this.#text.slice(this.#sent, end) } }] });
      this.#sent = end;
    }
  }

  /**
   * The choice: the call whole, or — when max_tokens cut it — as far as it got, with
   * finish_reason "length"; the rest of the arguments and the finish streamed first.
   */
  finish(result: { text: string; finishReason: FinishReason }, forcedName: string | undefined): ChoiceText {
    // The sampled text is the whole answer (a piece held back for a stop string never came).
    if (result.text.length > this.#text.length) this.push(result.text.slice(this.#text.length), 0);
    let complete = true;
    try {
      JSON.parse(this.#text);
    } catch {
      complete = false;
    }
    if (!complete && result.finishReason !== 'length') {
      throw new NodeError('runtime_error', { detail: 'the tool call grammar gave text that is not JSON.' });
    }
    const name = this.#name ?? forcedName ?? '';
    const tail = TAIL.exec(this.#text)?.[0].length ?? 0;
    const argsEnd = complete ? this.#text.length - tail : this.#text.length;
    const args = this.#argumentsAt < 0 ? '' : this.#text.slice(this.#argumentsAt, argsEnd).trim();
    if (this.#argumentsAt < 0) {
      const call = { index: 0, id: this.id, type: 'function', function: { name, arguments: '' } };
      this.#send({ role: 'assistant', content: null, tool_calls: [call] });
      this.#sent = 0;
    } else if (argsEnd > this.#sent) {
      this.#send({
        tool_calls: [{ index: 0, function: { arguments: this.#text.slice(this.#sent, argsEnd) } }],
      });
    }
    const finish: FinishReason = complete ? 'tool_calls' : 'length';
    this.#emit?.(chatChunk(this.#meta, {}, finish, this.#index), this.#tokens);
    this.#tokens = 0;
    return {
      text: '',
      finishReason: finish,
      toolCalls: [{ id: this.id, type: 'function', function: { name, arguments: args } }],
    };
  }

  /** Sends `delta` with the tokens sampled since the last chunk. */
  #send(delta: Record<string, unknown>): void {
    if (!this.#emit) return;
    this.#emit(chatChunk(this.#meta, delta as JsonObject, null, this.#index), this.#tokens);
    this.#tokens = 0;
  }
}
