import { randomInt } from 'node:crypto';
import { PENALTY_WINDOW_TOKENS } from '@gpumesh/protocol';
import {
  type LlamaContextSequence,
  type LlamaGrammar,
  LlamaGrammarEvaluationState,
  type Token,
  type TokenBias,
} from 'node-llama-cpp';
import { NodeError } from '../../errors.js';
import type { FinishReason } from '../openai-shapes.js';
import { type TokenLogprob, tokenLogprob } from './token-logprobs.js';

export type GenerateTextOptions = {
  sequence: LlamaContextSequence;
  /** Exactly the tokens to evaluate (BOS and template included): their count is prompt_tokens. */
  promptTokens: Token[];
  maxTokens: number;
  temperature: number;
  topP?: number;
  /** Keep the k most likely tokens (0 or absent: all). */
  topK?: number;
  /** Keep tokens at least this times as likely as the most likely (0 or absent: all). */
  minP?: number;
  /** Sampling seed; a random one when absent (see below). */
  seed?: number;
  tokenBias?: TokenBias;
  /** Stop strings: generation ends before the first of them, which is not returned. */
  stop: string[];
  /** OpenAI's presence and frequency penalties (−2…2), over the tokens generated so far. */
  presencePenalty?: number;
  frequencyPenalty?: number;
  /** Constrains the output to a grammar (response_format json_object / json_schema). */
  grammar?: LlamaGrammar;
  signal?: AbortSignal;
  /**
   * Tokens that precede the completion in its text (a continued answer's last tokens), as the
   * detokenizer's context for the first new ones: a word-initial token keeps its leading space.
   */
  lastTokens?: Token[];
  /**
   * Continue an answer from the ids the client's text was sampled as (NODE_PROTOCOL.md §9
   * "Continuing an answer"): `tokenIds` are replayed through the sampler one at a time, each taking
   * the place of the token sampled at its position — so the KV cache, the penalties' window, the
   * detokenizer's context and a seeded sampler's random stream are where the uninterrupted answer
   * had them — and generation goes on after them. `text` is what the client has of their text:
   * only what follows it is released; the result's text, tokens and ids are the new ones.
   */
  resume?: { tokenIds: readonly Token[]; text: string };
  /**
   * Log-probabilities of each sampled token with this many alternatives (0…20; absent: none),
   * from the distribution it was sampled from (token-logprobs.ts).
   */
  logprobs?: number;
  /**
   * Receives text as soon as it is final (a token, or a few when a character spans tokens), with the
   * tokens sampled since the previous call (those whose text is held back count when it is released)
   * and, when `logprobs` is set, the log-probabilities of the tokens whose text begins in it.
   */
  onText?: (text: string, tokens: number, logprobs?: TokenLogprob[], tokenIds?: Token[]) => void;
};

export type GeneratedText = {
  text: string;
  completionTokens: number;
  finishReason: FinishReason;
  /** Prompt tokens the sequence already held, not evaluated again (the prefix cache's reuse). */
  cachedTokens: number;
  /** Every sampled token (end-of-generation excluded), for teacher-forced verification. */
  tokenIds: Token[];
  /** With `logprobs`: one entry per token whose text begins in `text` (a stop string's cut drops the rest). */
  logprobs?: TokenLogprob[];
};

/** Tokens kept as detokenizer context (enough for leading-space rules). */
const DETOKENIZE_CONTEXT_TOKENS = 16;
/** A UTF-8 character is at most 4 bytes, so at most 4 byte tokens can be pending. */
const MAX_PENDING_TOKENS = 4;

/**
 * Samples tokens after the prompt (evaluated on the sequence's matching prefix, the rest erased)
 * until end-of-generation, a stop string, `maxTokens` or the context end. Each sampled token (EOG
 * excluded) counts toward completion_tokens; text is released token by token, holding back only a
 * partial UTF-8 character or a possible stop-string prefix.
 */
export async function generateText(options: GenerateTextOptions): Promise<GeneratedText> {
  const { sequence, promptTokens, stop, signal, onText, lastTokens = [] } = options;
  const model = sequence.model;
  const replay = options.resume?.tokenIds ?? [];
  const evaluated = promptTokens.length + replay.length;
  const room = sequence.context.contextSize - evaluated;
  if (room <= 0) {
    throw new NodeError('context_length_exceeded', {
      detail: `The prompt has ${evaluated} tokens; the context holds ${sequence.context.contextSize}.`,
    });
  }
  const limit = Math.min(options.maxTokens, room);
  // Keep what the sequence already holds of this prompt (the previous job's prompt, a shared system
  // prompt or chat history) and evaluate only the rest, at least the last token, which gives the
  // logits to sample from; node-llama-cpp's LlamaCompletion does the same. Re-evaluating a
  // 15-token prompt took 10.6 ms on the medium bench model (6 × 384, 2 cores) instead of 2.4 ms
  // for its last token alone: ~3 % of a 128-token job.
  await sequence.adaptStateToTokens(promptTokens.slice(0, -1), false);
  const cachedTokens = sequence.nextTokenIndex;
  const input = promptTokens.slice(cachedTokens);

  const generated: Token[] = [];
  let pending: Token[] = [];
  let text = '';
  let released = 0;
  let completionTokens = 0;
  let reportedTokens = 0;
  /** Ids released with text so far (replayed ones included): each release carries the ids after them. */
  let reportedIds = 0;
  /** Where the new text begins: after the continued answer's (0 when not continuing). */
  let base = 0;
  let finishReason: FinishReason = 'stop';
  let cut = false;
  // With logprobs: each token's entry and where its text begins; released with that text.
  const entries: TokenLogprob[] = [];
  let sentEntries = 0;
  const entriesBefore = (end: number) => {
    let last = sentEntries;
    while (last < entries.length && entries[last]!.offset < end) last++;
    const out = entries.slice(sentEntries, last);
    sentEntries = last;
    return out;
  };
  const release = (end: number) => {
    if (end <= released) return;
    const logprobs = options.logprobs === undefined ? undefined : entriesBefore(end);
    const ids = [...generated, ...pending].slice(reportedIds);
    onText?.(text.slice(released, end), completionTokens - reportedTokens, logprobs, ids);
    reportedTokens = completionTokens;
    reportedIds += ids.length;
    released = end;
  };

  const evaluateOptions = {
    // The protocol's sampling (NODE_PROTOCOL.md §9 "Sampling"): no truncation unless asked.
    // node-llama-cpp's own defaults (top-k 40, top-p 0.95) would sample from a distribution the
    // verifier is not told about.
    temperature: options.temperature,
    topK: options.topK ?? 0,
    topP: options.topP ?? 1,
    minP: options.minP ?? 0,
    // node-llama-cpp's default seed is the current second, so two requests in the same second
    // sampled the same text; without a seed each request samples on its own, as OpenAI's API does.
    seed: options.seed ?? randomInt(2 ** 31),
    tokenBias: options.tokenBias,
    yieldEogToken: true,
    ...(options.presencePenalty || options.frequencyPenalty
      ? {
          repeatPenalty: {
            // Every completion token so far, a partial character's pending ones included.
            punishTokens: () => [...generated, ...pending].slice(-PENALTY_WINDOW_TOKENS),
            maxPunishTokens: PENALTY_WINDOW_TOKENS,
            penalty: 1,
            presencePenalty: options.presencePenalty ?? 0,
            frequencyPenalty: options.frequencyPenalty ?? 0,
          },
        }
      : {}),
    ...(options.grammar
      ? { grammarEvaluationState: new LlamaGrammarEvaluationState({ model, grammar: options.grammar }) }
      : {}),
  };
  // The probabilities are read only when asked: they cost a vocabulary-sized map per token.
  const tokens = (
    options.logprobs === undefined
      ? sequence.evaluate(input, evaluateOptions)
      : sequence.evaluateWithMetadata(input, { probabilities: true }, evaluateOptions)
  ) as AsyncGenerator<Token | { token: Token; probabilities: Map<Token, number> }, void, Token | undefined>;
  let replayed = 0;
  /** The token evaluated next in place of the one sampled (a replayed id), if any. */
  let replacement: Token | undefined;
  try {
    while (true) {
      const next = await tokens.next(replacement);
      if (next.done) break;
      const step = next.value;
      replacement = undefined;
      let token = typeof step === 'number' ? step : step.token;
      if (signal?.aborted) break;
      const replaying = replayed < replay.length;
      if (replaying) {
        // The token sampled here drew from the sampler as the uninterrupted answer's did; the
        // answer's own token takes its place.
        token = replay[replayed++]!;
        replacement = token;
      } else if (model.isEogToken(token)) break;
      else completionTokens++;
      const context =
        generated.length >= DETOKENIZE_CONTEXT_TOKENS ? generated : [...lastTokens, ...generated];
      if (!replaying && typeof step !== 'number' && options.logprobs !== undefined) {
        const before = [...context, ...pending].slice(-DETOKENIZE_CONTEXT_TOKENS);
        entries.push(tokenLogprob(model, token, step.probabilities, options.logprobs, before, text.length));
      }
      pending.push(token);
      const piece = model.detokenize(pending, false, context.slice(-DETOKENIZE_CONTEXT_TOKENS));
      const partial = piece.endsWith('\uFFFD') && pending.length < MAX_PENDING_TOKENS;
      if (!partial) {
        // A character spanning tokens: each later token's text begins after the earlier ones'.
        if (options.logprobs !== undefined && pending.length > 1) {
          let at = text.length;
          for (const entry of entries.slice(-pending.length)) {
            entry.offset = Math.min(at, text.length + piece.length);
            at += entry.token.length;
          }
        }
        generated.push(...pending);
        pending = [];
        text += piece;
        const stopAt = findStop(text, stop, released);
        if (stopAt >= 0) {
          text = text.slice(0, stopAt);
          cut = true;
          if (replaying) base = resumeAt(text, options.resume!.text);
          break;
        }
        if (!replaying) release(text.length - heldBack(text, stop));
      }
      if (replaying) {
        if (replayed === replay.length) base = resumeAt(text, options.resume!.text);
        released = base;
        reportedIds = generated.length + pending.length;
        continue;
      }
      if (completionTokens >= limit) {
        finishReason = 'length';
        break;
      }
    }
  } finally {
    await tokens.return(undefined);
  }
  if (signal?.aborted) throw new NodeError('job_cancelled');
  if (replayed < replay.length && !cut) {
    throw new NodeError('runtime_error', { detail: 'The continued answer could not be replayed.' });
  }
  release(text.length);
  // A stop string's cut drops the entries of the tokens after it; otherwise every sampled token
  // has one (a last token with no text of its own, part of a character, included).
  const kept = entries.filter((e) => !cut || e.offset < text.length);
  if (options.logprobs !== undefined && sentEntries < kept.length) onText?.('', 0, kept.slice(sentEntries));
  // A continuation's offsets count from its own text.
  for (const entry of kept) entry.offset -= base;
  return {
    text: text.slice(base),
    completionTokens,
    cachedTokens,
    finishReason,
    tokenIds: [...generated, ...pending].slice(replay.length),
    ...(options.logprobs !== undefined ? { logprobs: kept } : {}),
  };
}

/**
 * Where a continuation's new text begins: after the client's `delivered` text, which the replayed
 * ids' text must begin with (it may hold more: text held back as a possible stop string's start).
 */
function resumeAt(text: string, delivered: string): number {
  if (!text.startsWith(delivered)) {
    throw new NodeError('invalid_request', {
      detail: 'continueFrom.tokenIds do not spell continueFrom.text.',
    });
  }
  return delivered.length;
}

/** Index of the earliest stop string in `text` that ends after `from`, or -1. */
function findStop(text: string, stop: string[], from: number): number {
  let found = -1;
  for (const s of stop) {
    const at = text.indexOf(s, Math.max(0, from - s.length));
    if (at >= 0 && (found < 0 || at < found)) found = at;
  }
  return found;
}

/** Length of the longest suffix of `text` that is a proper prefix of a stop string. */
function heldBack(text: string, stop: string[]): number {
  let held = 0;
  for (const s of stop) {
    for (let n = Math.min(s.length - 1, text.length); n > held; n--) {
      if (text.endsWith(s.slice(0, n))) {
        held = n;
        break;
      }
    }
  }
  return held;
}
