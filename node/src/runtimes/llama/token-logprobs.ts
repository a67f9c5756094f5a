/**
 * Log-probabilities of sampled tokens (OpenAI's `logprobs`), read from the distribution each token
 * was actually sampled from: node-llama-cpp's per-token `probabilities` are the candidates after
 * the whole sampler chain — logit_bias, penalties, top-k/top-p/min-p truncation, temperature — as
 * llama.cpp's server gives with `post_sampling_probs`. At OpenAI's defaults (temperature 1, no
 * truncation, bias or penalties) that is the model's own distribution; greedy sampling (temperature
 * 0) picks the most likely token of the distribution at temperature 1. A token truncated away is not
 * listed among the alternatives, so `top_logprobs` may hold fewer than asked.
 */
import type { LlamaModel, Token } from 'node-llama-cpp';

/** The floor OpenAI reports for a token of (numerically) zero probability. */
export const MIN_LOGPROB = -9999;

/** One alternative at a position: its text, UTF-8 bytes and log-probability. */
export type TopLogprob = { token: string; bytes: number[]; logprob: number };

/**
 * One sampled token: its id, text, bytes, log-probability, the most likely alternatives, and where
 * its text begins in the choice's text (characters).
 */
export type TokenLogprob = TopLogprob & { id: Token; top: TopLogprob[]; offset: number };

/** A byte-fallback token's piece (SentencePiece `<0xE2>`): one raw byte of a character. */
const BYTE_PIECE = /^<0x([0-9A-Fa-f]{2})>$/;

/**
 * The text and bytes of one token after `context` (the tokens before it, for leading-space rules).
 * A token that is part of a multi-byte character has no text of its own: its text is what the
 * tokenizer gives (a replacement character) and its bytes the raw byte of its piece.
 */
function tokenText(model: LlamaModel, token: Token, context: readonly Token[]): TopLogprob {
  const text = model.detokenize([token], false, [...context]);
  let bytes = [...Buffer.from(text, 'utf8')];
  if (text.includes('\uFFFD')) {
    const piece = BYTE_PIECE.exec(pieceOf(model, token) ?? '');
    if (piece) bytes = [Number.parseInt(piece[1]!, 16)];
  }
  return { token: text, bytes, logprob: 0 };
}

function pieceOf(model: LlamaModel, token: Token): string | undefined {
  const tokens = (model.fileInfo.metadata as unknown as { tokenizer?: { ggml?: { tokens?: unknown[] } } })
    .tokenizer?.ggml?.tokens;
  const piece = tokens?.[token];
  return typeof piece === 'string' ? piece : undefined;
}

const ln = (p: number | undefined) => (p && p > 0 ? Math.max(Math.log(p), MIN_LOGPROB) : MIN_LOGPROB);

/**
 * The log-probability record of `token`, sampled from `probabilities` (sorted from the most likely,
 * as node-llama-cpp returns them), with the `top` most likely alternatives.
 */
export function tokenLogprob(
  model: LlamaModel,
  token: Token,
  probabilities: ReadonlyMap<Token, number>,
  top: number,
  context: readonly Token[],
  offset: number,
): TokenLogprob {
  const alternatives: TopLogprob[] = [];
  for (const [id, p] of probabilities) {
    if (alternatives.length >= top) break;
    alternatives.push({ ...tokenText(model, id, context), logprob: ln(p) });
  }
  const logprob = ln(probabilities.get(token));
  return { ...tokenText(model, token, context), id: token, logprob, top: alternatives, offset };
}

/** Chat's `choices[].logprobs`: `{content: [{token, logprob, bytes, top_logprobs}]}`. */
export function chatLogprobs(entries: readonly TokenLogprob[]) {
  return {
    content: entries.map((e) => ({
      token: e.token,
      logprob: e.logprob,
      bytes: e.bytes,
      top_logprobs: e.top.map((t) => ({ token: t.token, logprob: t.logprob, bytes: t.bytes })),
    })),
  };
}

/**
 * Completions' legacy `choices[].logprobs`: parallel lists, each alternative set as a map from
 * token text to log-probability (two alternatives of the same text keep the likelier), and where
 * each token's text begins in the choice's text (`text_offset`, characters).
 */
export function completionLogprobs(entries: readonly TokenLogprob[]) {
  return {
    tokens: entries.map((e) => e.token),
    token_logprobs: entries.map((e) => e.logprob),
    top_logprobs: entries.map((e) => {
      const map: Record<string, number> = Object.create(null);
      for (const t of e.top) if (!Object.hasOwn(map, t.token)) map[t.token] = t.logprob;
      return map;
    }),
    text_offset: entries.map((e) => e.offset),
  };
}
