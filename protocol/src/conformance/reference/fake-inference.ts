import { createHash } from 'node:crypto';
import type { Usage } from '../../messages.js';

/**
 * The reference peers' stand-in for a model: deterministic words and vectors, so protocol behaviour
 * can be tested without one. A real node runs a runtime (node-llama-cpp, vLLM, Ollama) here.
 */
const WORDS = 'Hello from the gpumesh reference node , serving tokens one by one .'.split(' ');

/** The i-th generated token (a word with its leading space). */
export function fakeToken(i: number): string {
  return `${i === 0 ? '' : ' '}${WORDS[i % WORDS.length]}`;
}

/** Rough prompt token count: words in every string of the request's messages, prompt or input. */
export function countPromptTokens(value: unknown): number {
  if (typeof value === 'string') return Math.max(1, value.split(/\s+/).filter(Boolean).length);
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + countPromptTokens(item), 0);
  if (typeof value === 'object' && value !== null) {
    const record = value as Record<string, unknown>;
    return countPromptTokens(record.content ?? record.messages ?? record.prompt ?? record.input ?? '');
  }
  return 1;
}

/** A deterministic 8-dimensional unit vector for a text. */
export function fakeEmbedding(text: string): number[] {
  const digest = createHash('sha256').update(text).digest();
  const raw = Array.from({ length: 8 }, (_, i) => digest.readInt16BE(i * 2) / 32768);
  const norm = Math.hypot(...raw) || 1;
  return raw.map((x) => x / norm);
}

export function usageOf(promptTokens: number, completionTokens: number): Usage {
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
  };
}
