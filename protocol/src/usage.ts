import { type Static, Type } from '@sinclair/typebox';
import { Count } from './primitives.js';

/** A job's token (or media) counts, as OpenAI's `usage`. */
export const Usage = Type.Object({
  prompt_tokens: Count,
  completion_tokens: Count,
  total_tokens: Count,
  /**
   * v0.5, chat and completion jobs: `cached_tokens`, the prompt tokens the node did not evaluate
   * because its KV cache held them (≤ prompt_tokens, a frame rule). `null` is allowed as OpenAI-
   * compatible servers send it (a relaying node passes their usage on).
   */
  prompt_tokens_details: Type.Optional(
    Type.Union([Type.Object({ cached_tokens: Type.Optional(Count) }), Type.Null()]),
  ),
  /** Transcription and translation jobs: seconds of audio in (the billed unit, media.ts). */
  seconds: Type.Optional(Type.Number({ minimum: 0 })),
  /** Speech jobs: characters of text in (the billed unit, media.ts). */
  characters: Type.Optional(Count),
});
export type Usage = Static<typeof Usage>;
