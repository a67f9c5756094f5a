/**
 * What vision and voice jobs bill in (NODE_PROTOCOL.md §9 "Units and prices"), mapped onto the one
 * charging rule of charges.ts (units × price per million units): vision bills tokens at the token
 * prices; transcription and translation bill milliseconds of audio in, at the offer's price per
 * second × 1,000 per million ms; speech bills characters of input at its price per million
 * characters. Neither voice kind bills output.
 */
import type { JobKind } from '@gpumesh/protocol';

/** Billing units per second of audio: audio is billed to the millisecond. */
export const AUDIO_UNITS_PER_SECOND = 1000;

/** Voice job kinds (billed by audio seconds or characters, never by tokens). */
export function isVoiceKind(kind: JobKind): kind is 'transcription' | 'translation' | 'speech' {
  return kind === 'transcription' || kind === 'translation' || kind === 'speech';
}

/** An entry's prices in nanousd per million units (see pick-index.ts). */
export type UnitPricedEntry = {
  readonly priceInNano: bigint;
  readonly priceOutNano: bigint;
  /** Voice: nanousd per million ms of audio in (its per-second price × 1,000). */
  readonly perMillionMsNano?: bigint;
  /** Voice: nanousd per million characters spoken. */
  readonly perMCharNano?: bigint;
};

/** The input and output prices a job of `kind` is charged at on `entry`, nanousd per million units. */
export function unitPrices(
  entry: UnitPricedEntry,
  kind: JobKind,
): { priceInNano: bigint; priceOutNano: bigint } {
  if (kind === 'transcription' || kind === 'translation')
    return { priceInNano: entry.perMillionMsNano ?? 0n, priceOutNano: 0n };
  if (kind === 'speech') return { priceInNano: entry.perMCharNano ?? 0n, priceOutNano: 0n };
  return { priceInNano: entry.priceInNano, priceOutNano: entry.priceOutNano };
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
