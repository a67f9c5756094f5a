import {
  MAX_AUDIO_CHUNK_BYTES,
  SpeechRequestSchema,
  type TranscriptionRequest,
  TranscriptionRequestSchema,
} from '@gpumesh/protocol';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { NodeError } from '../../errors.js';
import type { JobResponse, RuntimeJob } from '../runtime.js';

const checkTranscription = TypeCompiler.Compile(TranscriptionRequestSchema);
const checkSpeech = TypeCompiler.Compile(SpeechRequestSchema);

/**
 * A transcription or translation job relayed to the local server's `/audio/transcriptions` or
 * `/audio/translations` (whisper.cpp server, LocalAI, vLLM): the file posted as multipart with
 * `response_format: verbose_json`, whose `duration` is the billed seconds. A server that reports
 * no duration fails the job rather than bill a guess.
 */
export async function relayTranscription(
  job: RuntimeJob,
  upstream: string,
  post: (body: FormData) => Promise<Response>,
): Promise<JobResponse> {
  if (!checkTranscription.Check(job.request))
    throw new NodeError('invalid_request', { detail: 'Not a transcription request.' });
  const request: TranscriptionRequest = job.request;
  const form = new FormData();
  const bytes = Buffer.from(request.file.data, 'base64');
  form.append('file', new Blob([bytes], { type: request.file.mimeType }), request.file.name);
  form.append('model', upstream);
  form.append('response_format', 'verbose_json');
  if (request.language) form.append('language', request.language);
  if (request.prompt) form.append('prompt', request.prompt);
  if (request.temperature !== undefined) form.append('temperature', String(request.temperature));
  const answer = (await (await post(form)).json()) as {
    text?: unknown;
    language?: unknown;
    duration?: unknown;
    segments?: { start?: unknown; end?: unknown; text?: unknown }[];
  };
  const lastEnd = Number(answer.segments?.at(-1)?.end);
  const duration = typeof answer.duration === 'number' ? answer.duration : lastEnd;
  if (typeof answer.text !== 'string' || !Number.isFinite(duration) || duration < 0)
    throw new NodeError('runtime_error', { detail: 'The local server reported no text or duration.' });
  const seconds = Math.round(duration * 1000) / 1000;
  return {
    object: 'transcription',
    text: answer.text,
    ...(typeof answer.language === 'string' ? { language: answer.language.slice(0, 32) } : {}),
    duration: seconds,
    ...(Array.isArray(answer.segments)
      ? {
          segments: answer.segments.slice(0, 10_000).map((s) => ({
            start: Math.max(0, Number(s.start) || 0),
            end: Math.max(0, Number(s.end) || 0),
            text: String(s.text ?? ''),
          })),
        }
      : {}),
    usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, seconds },
  };
}

/**
 * A speech job relayed to the local server's `/audio/speech`: its body streamed back as
 * `audio.chunk`s of at most MAX_AUDIO_CHUNK_BYTES as the server sends it. Usage: the input's
 * characters.
 */
export async function relaySpeech(
  job: RuntimeJob,
  upstream: string,
  post: (body: string) => Promise<Response>,
): Promise<JobResponse> {
  if (!checkSpeech.Check(job.request))
    throw new NodeError('invalid_request', { detail: 'Not a speech request.' });
  const request = job.request;
  const response = await post(JSON.stringify({ ...request, model: upstream }));
  let bytes = 0;
  if (response.body) {
    for await (const data of response.body as unknown as AsyncIterable<Uint8Array>) {
      if (job.signal?.aborted) throw new NodeError('job_cancelled');
      for (let at = 0; at < data.length; at += MAX_AUDIO_CHUNK_BYTES) {
        const piece = Buffer.from(data.subarray(at, at + MAX_AUDIO_CHUNK_BYTES));
        bytes += piece.length;
        job.onChunk?.({ object: 'audio.chunk', data: piece.toString('base64') });
      }
    }
  }
  if (bytes === 0) throw new NodeError('runtime_error', { detail: 'The local server sent no audio.' });
  return {
    object: 'audio.speech',
    format: request.response_format ?? 'mp3',
    bytes,
    usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, characters: [...request.input].length },
  };
}
