/**
 * Vision and voice jobs (NODE_PROTOCOL.md §9 "Vision", "Transcription and translation",
 * "Speech"): the request bodies a node receives, the audio chunk it streams back, and the units each
 * family is billed in.
 *
 * Bytes cross the WebSocket as base64 inside the ordinary JSON text frames, within
 * `maxFrameBytes`: audio in a transcription job's `request.file.data`, images as `data:` URLs in a
 * vision job's content parts, speech audio in `chunk` frames of at most MAX_AUDIO_CHUNK_BYTES
 * each. One frame grammar (text JSON, validated by one schema) keeps every v0 peer's parser, size
 * check and ordering rules valid; binary WebSocket messages stay "not a frame".
 */
import { type Static, Type } from '@sinclair/typebox';
import { Count } from './primitives.js';

/** Voice job kinds a voice model serves; a voice offer names them in `kinds`. */
export const VOICE_KINDS = ['transcription', 'translation', 'speech'] as const;
export type VoiceKind = (typeof VOICE_KINDS)[number];

/** Formats a transcription answer may take (OpenAI `response_format`). */
export const TRANSCRIPTION_FORMATS = ['json', 'text', 'verbose_json', 'srt', 'vtt'] as const;
export type TranscriptionFormat = (typeof TRANSCRIPTION_FORMATS)[number];

/** Audio formats speech may be asked in (OpenAI `response_format`); a node may refuse some. */
export const SPEECH_FORMATS = ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'] as const;
export type SpeechFormat = (typeof SPEECH_FORMATS)[number];

/** Media types of the speech formats, as the coordinator answers them. */
export const SPEECH_MEDIA_TYPES: Record<SpeechFormat, string> = {
  mp3: 'audio/mpeg',
  opus: 'audio/ogg',
  aac: 'audio/aac',
  flac: 'audio/flac',
  wav: 'audio/wav',
  pcm: 'audio/pcm',
};

/**
 * Most decoded audio bytes one speech `chunk` frame carries: 32 KiB, 43,692 as base64, so a chunk
 * fits the smallest `maxFrameBytes` a coordinator may grant (65,536).
 */
export const MAX_AUDIO_CHUNK_BYTES = 32 * 1024;

/** Longest speech input, characters (Unicode code points), as OpenAI's. */
export const MAX_SPEECH_INPUT_CHARS = 4096;

const Base64 = Type.String({ pattern: '^[A-Za-z0-9+/]*={0,2}$' });

/** An audio file inside a job: its name, media type and bytes (base64). */
export const AudioFileSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 256 }),
    mimeType: Type.String({ minLength: 1, maxLength: 128 }),
    data: Base64,
  },
  { additionalProperties: false },
);

/** A `transcription` or `translation` job's request: OpenAI's multipart fields, the file as base64. */
export const TranscriptionRequestSchema = Type.Object({
  model: Type.String({ minLength: 1, maxLength: 256 }),
  file: AudioFileSchema,
  language: Type.Optional(Type.String({ minLength: 1, maxLength: 16 })),
  prompt: Type.Optional(Type.String({ maxLength: 4096 })),
  response_format: Type.Optional(Type.Union(TRANSCRIPTION_FORMATS.map((f) => Type.Literal(f)))),
  temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
});
export type TranscriptionRequest = Static<typeof TranscriptionRequestSchema>;

/** A `speech` job's request: OpenAI's `POST /v1/audio/speech` body. */
export const SpeechRequestSchema = Type.Object({
  model: Type.String({ minLength: 1, maxLength: 256 }),
  input: Type.String({ minLength: 1, maxLength: MAX_SPEECH_INPUT_CHARS * 4 }),
  voice: Type.String({ minLength: 1, maxLength: 64 }),
  response_format: Type.Optional(Type.Union(SPEECH_FORMATS.map((f) => Type.Literal(f)))),
  speed: Type.Optional(Type.Number({ minimum: 0.25, maximum: 4 })),
  instructions: Type.Optional(Type.String({ maxLength: 4096 })),
});
export type SpeechRequest = Static<typeof SpeechRequestSchema>;

/** One streamed piece of a speech job's audio: a `chunk` frame's `chunk`. */
export const AudioChunkSchema = Type.Object({
  object: Type.Literal('audio.chunk'),
  /** Up to MAX_AUDIO_CHUNK_BYTES of audio, base64; the audio is the chunks' bytes in `seq` order. */
  data: Base64,
});
export type AudioChunk = Static<typeof AudioChunkSchema>;

/**
 * A transcription's `result.response`: OpenAI's verbose shape (text, language, duration in
 * seconds) whatever the client asked; the coordinator renders json, text, srt or vtt from it.
 */
export const TranscriptionResponseSchema = Type.Object({
  object: Type.Literal('transcription'),
  text: Type.String(),
  language: Type.Optional(Type.String({ maxLength: 32 })),
  duration: Type.Number({ minimum: 0 }),
  segments: Type.Optional(
    Type.Array(
      Type.Object({
        start: Type.Number({ minimum: 0 }),
        end: Type.Number({ minimum: 0 }),
        text: Type.String(),
      }),
      { maxItems: 10_000 },
    ),
  ),
  usage: Type.Object({
    prompt_tokens: Count,
    completion_tokens: Count,
    total_tokens: Count,
    /** The billed unit: seconds of audio in. */
    seconds: Type.Number({ minimum: 0 }),
  }),
});
export type TranscriptionResponse = Static<typeof TranscriptionResponseSchema>;

/**
 * Billing units (NODE_PROTOCOL.md §9): a job's `usage` carries, beside the token counts, the
 * unit its family is billed in — `seconds` of audio in (transcription, translation) and
 * `characters` of text in (speech); vision bills tokens, image tokens counted as prompt tokens.
 */
export const MEDIA_USAGE_UNITS = {
  transcription: 'seconds',
  translation: 'seconds',
  speech: 'characters',
} as const satisfies Record<VoiceKind, string>;

/**
 * Image tokens a vision job may bill per image at most: IMAGE_TOKENS_BASE plus one per
 * PIXELS_PER_IMAGE_TOKEN pixels (a 14 × 14 patch, the smallest patch vision encoders in use take;
 * the base covers tiles, thumbnails and separators).
 */
export const IMAGE_TOKENS_BASE = 1024;
export const PIXELS_PER_IMAGE_TOKEN = 196;

/** The most image tokens an image of width × height may bill (see IMAGE_TOKENS_BASE). */
export function imageTokensBound(width: number, height: number): number {
  return IMAGE_TOKENS_BASE + Math.ceil((width * height) / PIXELS_PER_IMAGE_TOKEN);
}
