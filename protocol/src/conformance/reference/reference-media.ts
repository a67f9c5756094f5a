import type { Manifest, ModelOffer } from '../../manifest.js';
import { MAX_AUDIO_CHUNK_BYTES } from '../../media.js';
import type { Usage } from '../../messages.js';
import { toneWav } from '../node/media-scenarios.js';

/** Model ids of the reference node's vision and voice stand-ins. */
export const REFERENCE_VISION_MODEL = 'tiny-vision';
export const REFERENCE_SPEECH_MODEL = 'tiny-speech';
export const REFERENCE_TRANSCRIPTION_MODEL = 'tiny-transcribe';

/** The reference node's vision and voice offers (beside referenceManifest's chat and embedding ones). */
export const REFERENCE_MEDIA_MODELS: readonly ModelOffer[] = [
  {
    id: REFERENCE_VISION_MODEL,
    family: 'vision',
    contextLength: 4096,
    maxConcurrency: 2,
    price: { currency: 'USD', inputPerMTok: '100000000', outputPerMTok: '200000000' },
  },
  {
    id: REFERENCE_SPEECH_MODEL,
    family: 'voice',
    contextLength: 4096,
    maxConcurrency: 2,
    kinds: ['speech'],
    price: { currency: 'USD', inputPerMTok: '0', outputPerMTok: '0', inputPerMChar: '1000000000' },
  },
  {
    id: REFERENCE_TRANSCRIPTION_MODEL,
    family: 'voice',
    contextLength: 0,
    maxConcurrency: 2,
    kinds: ['transcription', 'translation'],
    price: { currency: 'USD', inputPerMTok: '0', outputPerMTok: '0', inputPerSecond: '100000' },
  },
];

/** A manifest with the media offers added (their scopes too). */
export function withMediaModels(manifest: Manifest): Manifest {
  return {
    ...manifest,
    models: [...manifest.models, ...REFERENCE_MEDIA_MODELS],
    scopes: [...manifest.scopes, 'infer.vision', 'infer.voice'],
  };
}

const ZERO: Usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };

/**
 * The reference node's fake speech: a tone WAV, 60 ms per character, cut in audio.chunk pieces of
 * at most MAX_AUDIO_CHUNK_BYTES (`oversizedChunks`: in one piece, whatever its size — a broken node).
 */
export function fakeSpeech(
  input: string,
  oversizedChunks = false,
): {
  chunks: { object: 'audio.chunk'; data: string }[];
  response: Record<string, unknown> & { usage: Usage };
} {
  const characters = [...input].length;
  const wav = toneWav(Math.max(0.1, characters * 0.06), 22_050);
  const size = oversizedChunks ? wav.length : MAX_AUDIO_CHUNK_BYTES;
  const chunks = [];
  for (let at = 0; at < wav.length; at += size)
    chunks.push({ object: 'audio.chunk' as const, data: wav.subarray(at, at + size).toString('base64') });
  return {
    chunks,
    response: { object: 'audio.speech', format: 'wav', bytes: wav.length, usage: { ...ZERO, characters } },
  };
}

/**
 * The reference node's fake transcription: the text "tone", the duration read from the WAV's
 * header and data (`inflate`: reported twice as long — a broken node); undefined for a file that is
 * not a WAV it can read.
 */
export function fakeTranscription(
  base64: string,
  inflate = false,
): (Record<string, unknown> & { usage: Usage }) | undefined {
  const wav = Buffer.from(base64, 'base64');
  if (wav.length < 44 || wav.toString('ascii', 0, 4) !== 'RIFF') return undefined;
  const byteRate = wav.readUInt32LE(28);
  if (byteRate === 0) return undefined;
  const seconds = Math.round(((wav.length - 44) / byteRate) * (inflate ? 2 : 1) * 1000) / 1000;
  return {
    object: 'transcription',
    text: 'tone',
    language: 'en',
    duration: seconds,
    segments: [{ start: 0, end: seconds, text: 'tone' }],
    usage: { ...ZERO, seconds },
  };
}
