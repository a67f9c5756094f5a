/**
 * Judging one checked completion (NODE_PROTOCOL.md §9 "Deciding"). First what the node claims must
 * hold together — token ids present, as many as `usage` says, detokenizing to the text the client
 * got after a prompt that holds the request — or the check fails outright: a node can't opt out of
 * verification by sending no ids, or replay one genuine completion. Then the verifier's per-position
 * description of the job's own sampling distribution gives the evidence (an e-value,
 * @gpumesh/protocol `completionEvidence`), whose false-positive bound holds for any model.
 */
import { MAX_VERIFY_TOKENS } from '@gpumesh/protocol';
import { CHECK_CAP, completionEvidence, type EvidencePosition } from '@gpumesh/protocol/internal';
import type { JobTokenIds } from '../../router/jobs.js';
import { isConstrained } from './sampling-of.js';

export type Judgement = {
  tokens: number;
  /** ln of the check's e-value (capped at CHECK_CAP); > 0 counts against the node. */
  logE: number;
  /** Mean −ln p − H over the kept tokens (≈ 0 when honest). */
  meanExcess: number;
  /** Raw mean log-probability and top-k share (shown on /network; not the decision). */
  meanLogprob: number;
  topKFraction: number;
  /** Whether the statistic judged the tokens (false: a grammar shaped them, or the claims failed). */
  scored: boolean;
  /** No evidence against the node worth a 5 % test on its own. */
  passed: boolean;
  /** Why the check failed outright (claims that don't hold together), if it did. */
  failure?: string;
  /**
   * ln q/p of the completion for each cheaper quantization q of the claimed weights the
   * coordinator's verifier scored (substitution-ratio.ts), by quant; absent: none.
   */
  substitution?: Readonly<Record<string, number>>;
};

/** A check counts as passed below this ln e-value (a 5 % test on its own). */
const PASS_BELOW = Math.log(20);

/** What the node claimed for one job, and what the client got. */
export type Claims = {
  kind: 'chat' | 'completion';
  request: Record<string, unknown>;
  usage: { prompt_tokens: number; completion_tokens: number };
  tokenIds: JobTokenIds | undefined;
  /** The text the client got for choice 0 (undefined: not text, e.g. a tool call). */
  delivered: string | undefined;
  /**
   * A continued answer's ids joined (router/continued-ids.ts): its first `scoredFrom` completion
   * tokens are another node's — held to the text like the rest, but not evidence against this one.
   */
  scoredFrom?: number;
};

/** A check the node failed outright: the most one check weighs. */
export function failedCheck(reason: string, tokens = 0): Judgement {
  return {
    tokens,
    logE: CHECK_CAP,
    meanExcess: 0,
    meanLogprob: 0,
    topKFraction: 0,
    scored: false,
    passed: false,
    failure: reason,
  };
}

/** What fails before any verifier is asked, or undefined when the ids can be scored. */
export function precheck(claims: Claims): string | undefined {
  const ids = claims.tokenIds;
  if (!ids) return 'no token ids';
  if (ids.prompt.length === 0 || ids.prompt.length > MAX_VERIFY_TOKENS) return 'no prompt token ids';
  if (ids.prompt.length !== claims.usage.prompt_tokens) {
    return `${ids.prompt.length} prompt token ids for usage.prompt_tokens ${claims.usage.prompt_tokens}`;
  }
  // With n > 1 the usage counts every choice; the ids are choice 0's, so no more than it.
  const choices = typeof claims.request.n === 'number' ? claims.request.n : 1;
  const over = choices > 1 ? ids.completion.length > claims.usage.completion_tokens : false;
  if (over || (choices <= 1 && ids.completion.length !== claims.usage.completion_tokens)) {
    return `${ids.completion.length} completion token ids for usage.completion_tokens ${claims.usage.completion_tokens}`;
  }
  return undefined;
}

/** The verifier's answer against the claims: a failed check, or the evidence; undefined when out of protocol. */
export function judge(response: Record<string, unknown>, claims: Claims): Judgement | undefined {
  const n = claims.tokenIds?.completion.length ?? 0;
  const positions = readPositions(response, n);
  if (!positions) return undefined;
  const mismatch =
    textMismatch(response.completion_text, claims) ?? promptMismatch(response.prompt_text, claims.request);
  if (mismatch) return failedCheck(mismatch, n);
  const from = Math.min(claims.scoredFrom ?? 0, n - 1);
  const own = n - from;
  const logprobs = (response.logprobs as number[]).slice(from);
  const meanLogprob = logprobs.reduce((s, x) => s + Math.max(x, -30), 0) / own;
  const topKFraction = [...(response.in_top_k as string).slice(from)].filter((c) => c === '1').length / own;
  const evidence = completionEvidence(positions.slice(from));
  const scored = !isConstrained(claims.request);
  const logE = scored ? Math.min(evidence.logE, CHECK_CAP) : 0;
  return {
    tokens: own,
    logE,
    meanExcess: evidence.meanExcess,
    meanLogprob,
    topKFraction,
    scored,
    passed: scored && logE < PASS_BELOW,
  };
}

/** The v0.2 per-position fields, each list `n` long and in range; undefined otherwise. */
function readPositions(r: Record<string, unknown>, n: number): EvidencePosition[] | undefined {
  const lists = [r.logprobs, r.sampled_logprobs, r.entropy, r.entropy_var, r.edge_gaps];
  if (n === 0 || !lists.every((l) => Array.isArray(l) && l.length === n)) return undefined;
  if (typeof r.in_top_k !== 'string' || r.in_top_k.length !== n || !/^[01]*$/.test(r.in_top_k))
    return undefined;
  const finite = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);
  const sampled = r.sampled_logprobs as unknown[];
  const entropy = r.entropy as unknown[];
  const variance = r.entropy_var as unknown[];
  const gaps = r.edge_gaps as unknown[];
  const out: EvidencePosition[] = [];
  for (let i = 0; i < n; i++) {
    const s = sampled[i];
    const [h, v, g] = [entropy[i], variance[i], gaps[i]];
    if (!(s === null || (finite(s) && s <= 1e-3)) || !finite(h) || !finite(v) || !finite(g)) return undefined;
    if (h < 0 || v < 0 || g < 0 || !finite((r.logprobs as unknown[])[i])) return undefined;
    out.push({ sampledLogprob: s === null ? null : Math.min(s, 0), entropy: h, entropyVar: v, edgeGap: g });
  }
  return out;
}

/** Stop strings may end the text the client got before the ids do. */
const MAX_UNSENT_CHARS = 64;

/**
 * Why the detokenized completion is not what the client got, or undefined. Streaming decodes byte
 * tokens piece by piece, so an invalid UTF-8 sequence can come out a character different from a
 * whole decode: a few edits are allowed (2 + 1 per 50 characters); a stop string may end the
 * delivered text before the ids do.
 */
function textMismatch(text: unknown, claims: Claims): string | undefined {
  if (claims.delivered === undefined) return undefined;
  if (typeof text !== 'string') return 'the verifier gave no completion text';
  const ids = normalize(text);
  const got = normalize(claims.delivered);
  const budget = 2 + Math.floor(got.length / 50);
  const unsent = MAX_UNSENT_CHARS + Math.max(0, ...stopStrings(claims.request.stop).map((s) => s.length));
  const end = prefixWithin(got, ids, budget);
  if (end !== undefined && ids.length - end <= unsent) return undefined;
  return 'the token ids do not detokenize to the delivered text';
}

/**
 * The longest prefix of `b` within `budget` edits of `a` (its length), or undefined: a banded
 * edit distance, O(|a| × budget).
 */
function prefixWithin(a: string, b: string, budget: number): number | undefined {
  const width = 2 * budget + 1;
  const big = budget + 1;
  // row[k] = distance(a[0..i], b[0..i + k − budget])
  let row = Array.from({ length: width }, (_, k) => (k - budget >= 0 ? k - budget : big));
  for (let i = 1; i <= a.length; i++) {
    const next = new Array<number>(width).fill(big);
    for (let k = 0; k < width; k++) {
      const j = i + k - budget;
      if (j < 0 || j > b.length) continue;
      let best = big;
      if (j === 0) best = i;
      else {
        best = Math.min(best, (row[k] ?? big) + (a[i - 1] === b[j - 1] ? 0 : 1));
        if (k > 0) best = Math.min(best, next[k - 1]! + 1);
      }
      if (k + 1 < width) best = Math.min(best, row[k + 1]! + 1);
      next[k] = Math.min(best, big);
    }
    row = next;
  }
  for (let k = width - 1; k >= 0; k--) {
    const j = a.length + k - budget;
    if (j >= 0 && j <= b.length && row[k]! <= budget) return j;
  }
  return undefined;
}

/** Why the detokenized prompt does not hold the request's text, or undefined. */
function promptMismatch(text: unknown, request: Record<string, unknown>): string | undefined {
  if (typeof text !== 'string') return 'the verifier gave no prompt text';
  const prompt = normalize(text);
  for (const part of requestTexts(request)) {
    if (!prompt.includes(normalize(part))) return 'the prompt token ids do not hold the request';
  }
  return undefined;
}

/**
 * Whether a client job can be checked against its request: chat, and completions of one string
 * prompt. A completion of several prompts has the ids of its first only, and one of token ids has
 * no text to hold, so "the prompt must hold the request" would convict an honest node: such jobs
 * are neither spot-checked nor replayed as canaries (coordinator/README.md).
 */
export function checkableRequest(kind: string, request: Record<string, unknown>): boolean {
  return kind === 'chat' || (kind === 'completion' && typeof request.prompt === 'string');
}

/** The texts a prompt must hold: a completion's prompt, each message's text content. */
function requestTexts(request: Record<string, unknown>): string[] {
  if (typeof request.prompt === 'string') return [request.prompt];
  const out: string[] = [];
  for (const m of Array.isArray(request.messages) ? request.messages : []) {
    const content = (m as { content?: unknown }).content;
    if (typeof content === 'string') out.push(content);
    else if (Array.isArray(content)) {
      for (const part of content) {
        const t = (part as { type?: unknown; text?: unknown }).text;
        if ((part as { type?: unknown }).type === 'text' && typeof t === 'string') out.push(t);
      }
    }
  }
  return out;
}

function stopStrings(stop: unknown): string[] {
  if (typeof stop === 'string') return [stop];
  return Array.isArray(stop) ? stop.filter((s): s is string => typeof s === 'string') : [];
}

/** Whitespace runs as one space, trimmed, and no replacement characters (a split UTF-8 character). */
function normalize(s: string): string {
  return s
    .replace(/\uFFFD/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}
