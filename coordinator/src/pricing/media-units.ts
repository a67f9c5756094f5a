/**
 * What vision and voice jobs bill in (NODE_PROTOCOL.md §9 "Units and prices"): vision bills tokens;
 * transcription and translation bill milliseconds of audio in; speech bills characters of input.
 * Their prices per million units are price.ts's (pricesOf).
 */
import type { JobKind } from '@gpumesh/protocol';

/** Billing units per second of audio: audio is billed to the millisecond. */
export const AUDIO_UNITS_PER_SECOND = 1000;

/** Voice job kinds (billed by audio seconds or characters, never by tokens). */
export function isVoiceKind(kind: JobKind): kind is 'transcription' | 'translation' | 'speech' {
  return kind === 'transcription' || kind === 'translation' || kind === 'speech';
}

/**
 * The units a node's usage claims for a job of `kind`: audio seconds as whole milliseconds
 * (rounded up), characters, or its token counts. Non-numbers count as 0.
 */
export function claimedUnits(
  kind: JobKind,
  usage: { prompt_tokens: number; completion_tokens: number; seconds?: unknown; characters?: unknown },
): { promptTokens: number; completionTokens: number } {
  if (kind === 'transcription' || kind === 'translation') {
    const s = typeof usage.seconds === 'number' && Number.isFinite(usage.seconds) ? usage.seconds : 0;
    return { promptTokens: Math.max(0, Math.ceil(s * AUDIO_UNITS_PER_SECOND - 1e-6)), completionTokens: 0 };
  }
  if (kind === 'speech') {
    const c = typeof usage.characters === 'number' ? usage.characters : 0;
    return { promptTokens: c, completionTokens: 0 };
  }
  return { promptTokens: usage.prompt_tokens, completionTokens: usage.completion_tokens };
}
