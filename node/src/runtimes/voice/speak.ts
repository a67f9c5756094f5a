import { MAX_AUDIO_CHUNK_BYTES, SpeechRequestSchema } from '@gpumesh/protocol';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { NodeError } from '../../errors.js';
import type { JobResponse, RuntimeJob } from '../runtime.js';
import { runProcess } from './run-process.js';

const checkSpeech = TypeCompiler.Compile(SpeechRequestSchema);

/** Formats espeak-ng (WAV) and sox (the rest) make here; mp3, opus and aac need codecs Debian's sox lacks. */
export const ESPEAK_FORMATS = ['wav', 'pcm', 'flac'] as const;
/** espeak-ng's speaking rate at speed 1, words per minute (its own default). */
export const ESPEAK_WORDS_PER_MINUTE = 175;
/** OpenAI's voice names, mapped to espeak-ng's US-English voice with a male or female variant. */
const OPENAI_VOICES: Record<string, string> = {
  alloy: 'en-us+f3',
  ash: 'en-us+m3',
  ballad: 'en-us+m2',
  coral: 'en-us+f2',
  echo: 'en-us+m1',
  fable: 'en-us+m4',
  nova: 'en-us+f4',
  onyx: 'en-us+m7',
  sage: 'en-us+f1',
  shimmer: 'en-us+f5',
  verse: 'en-us+m5',
};
/** An espeak-ng voice name (`en-us`, `de`, `en-gb+f2`). */
const ESPEAK_VOICE = /^[a-z]{2,3}(-[a-z0-9]{2,8})*(\+[a-z0-9]{1,8})?$/;

/**
 * A `speech` job on espeak-ng: the input read from stdin (never an argument), WAV on stdout,
 * through sox for `pcm` (24 kHz 16-bit mono, as OpenAI's) and `flac`; streamed as `audio.chunk`s of
 * at most MAX_AUDIO_CHUNK_BYTES as the engine writes them. Usage: the input's characters.
 */
export async function speak(job: RuntimeJob, espeak = 'espeak-ng', sox = 'sox'): Promise<JobResponse> {
  if (!checkSpeech.Check(job.request))
    throw new NodeError('invalid_request', { detail: 'Not a speech request.' });
  const request = job.request;
  const format = request.response_format ?? 'mp3';
  if (!(ESPEAK_FORMATS as readonly string[]).includes(format)) {
    throw new NodeError('invalid_request', {
      detail: `This node makes ${ESPEAK_FORMATS.join(', ')} audio, not ${format}.`,
    });
  }
  const voice = OPENAI_VOICES[request.voice] ?? request.voice;
  if (!ESPEAK_VOICE.test(voice))
    throw new NodeError('invalid_request', { detail: `Unknown voice "${request.voice.slice(0, 64)}".` });
  const wpm = Math.round(ESPEAK_WORDS_PER_MINUTE * (request.speed ?? 1));
  let bytes = 0;
  let seq = 0;
  const emit = (data: Buffer) => {
    for (let at = 0; at < data.length; at += MAX_AUDIO_CHUNK_BYTES) {
      const piece = data.subarray(at, at + MAX_AUDIO_CHUNK_BYTES);
      bytes += piece.length;
      seq++;
      job.onChunk?.({ object: 'audio.chunk', data: piece.toString('base64') });
    }
  };
  const espeakArgs = ['--stdout', '-v', voice, '-s', String(wpm), '--stdin'];
  if (format === 'wav') {
    const run = await runProcess(espeak, espeakArgs, {
      stdin: request.input,
      signal: job.signal,
      onData: emit,
    });
    if (run.code !== 0)
      throw new NodeError('invalid_request', { detail: `espeak-ng refused the voice or text.` });
  } else {
    const wav = await runProcess(espeak, espeakArgs, { stdin: request.input, signal: job.signal });
    if (wav.code !== 0)
      throw new NodeError('invalid_request', { detail: `espeak-ng refused the voice or text.` });
    const out =
      format === 'pcm'
        ? ['-t', 'raw', '-r', '24000', '-e', 'signed-integer', '-b', '16', '-c', '1', '-']
        : ['-t', 'flac', '-'];
    const converted = await runProcess(sox, ['-q', '-t', 'wav', '-', ...out], {
      stdin: wav.stdout,
      signal: job.signal,
      onData: emit,
    });
    if (converted.code !== 0)
      throw new NodeError('runtime_error', { detail: 'sox failed to convert the audio.' });
  }
  if (seq === 0) throw new NodeError('runtime_error', { detail: 'espeak-ng produced no audio.' });
  const characters = [...request.input].length;
  return {
    object: 'audio.speech',
    format,
    bytes,
    usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, characters },
  };
}
