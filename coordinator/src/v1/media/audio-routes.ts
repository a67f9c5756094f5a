/**
 * The voice endpoints of /v1 (OpenAI shapes, sk- keys): POST /v1/audio/transcriptions and
 * /v1/audio/translations (multipart: the audio file and its fields), POST /v1/audio/speech (JSON in,
 * audio streamed out as the node produces it). Jobs go to voice models whose nodes serve the kind
 * (scope infer.voice, tier basic and up); billing in audio seconds and characters
 * (pricing/media-units.ts).
 */
import {
  MAX_SPEECH_INPUT_CHARS,
  SPEECH_FORMATS,
  SPEECH_MEDIA_TYPES,
  type SpeechFormat,
  TRANSCRIPTION_FORMATS,
  type TranscriptionFormat,
} from '@gpumesh/protocol';
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../app-context.js';
import { ApiError } from '../../errors.js';
import { AUDIO_UNITS_PER_SECOND } from '../../pricing/media-units.js';
import { findModel } from '../../router/find-model.js';
import { routeRequest } from '../../router/route-request.js';
import type { InferenceJob, RouteDeps } from '../../router/types.js';
import { requestOrigin } from '../request-origin.js';
import { audioDurationBound } from './audio-duration-bound.js';
import { openAudioStream } from './audio-stream.js';
import { parseMultipart } from './parse-multipart.js';
import { renderTranscription } from './render-transcription.js';

export type AudioRoutesOptions = {
  ctx: AppContext;
  deps: RouteDeps;
  apiKey: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
};

const API_KEY = [{ apiKey: [] }];
/** Room for a multipart body's fields and boundaries beside the audio file. */
const MULTIPART_OVERHEAD_BYTES = 64 * 1024;

/** The transcription fields (multipart, parsed by parseMultipart; the file checked in the handler). */
export const TranscriptionBody = Type.Object(
  {
    file: Type.Object({}, { description: 'the audio file (WAV, FLAC, Ogg, MP3 … as the node decodes)' }),
    model: Type.String({ minLength: 1, maxLength: 256 }),
    language: Type.Optional(Type.String({ pattern: '^[a-zA-Z]{2,3}([-_][a-zA-Z0-9]{2,8})?$' })),
    prompt: Type.Optional(Type.String({ maxLength: 4096 })),
    response_format: Type.Optional(Type.Union(TRANSCRIPTION_FORMATS.map((f) => Type.Literal(f)))),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  },
  { additionalProperties: false },
);
type TranscriptionBody = Static<typeof TranscriptionBody> & {
  file: { filename: string; contentType: string; data: Buffer };
};

export const SpeechBody = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 256 }),
    input: Type.String({ minLength: 1, maxLength: MAX_SPEECH_INPUT_CHARS }),
    voice: Type.String({ minLength: 1, maxLength: 64 }),
    response_format: Type.Optional(Type.Union(SPEECH_FORMATS.map((f) => Type.Literal(f)))),
    speed: Type.Optional(Type.Number({ minimum: 0.25, maximum: 4 })),
    instructions: Type.Optional(Type.String({ maxLength: 4096 })),
    stream_format: Type.Optional(Type.Literal('audio')),
  },
  { additionalProperties: false },
);
type SpeechBody = Static<typeof SpeechBody>;

export async function audioRoutes(app: FastifyInstance, options: AudioRoutesOptions): Promise<void> {
  const { ctx, deps, apiKey } = options;
  const media = ctx.config.media;

  // Multipart bodies, for these routes only: the fields as strings (temperature as a number), the
  // file as its bytes; the route schema then validates them like any body.
  app.addContentTypeParser('multipart/form-data', { parseAs: 'buffer' }, (request, body, done) => {
    try {
      const fields: Record<string, unknown> = {};
      for (const part of parseMultipart(body as Buffer, String(request.headers['content-type']))) {
        if (part.name in fields)
          throw new ApiError('invalid_request', `The field ${part.name} appears twice.`);
        if (part.filename !== undefined) {
          fields[part.name] = {
            filename: part.filename.slice(0, 256) || 'audio',
            contentType: part.contentType ?? 'application/octet-stream',
            data: part.data,
          };
        } else {
          const text = part.data.toString('utf8');
          fields[part.name] = part.name === 'temperature' && /^[0-9.]+$/.test(text) ? Number(text) : text;
        }
      }
      done(null, fields);
    } catch (error) {
      done(error as Error, undefined);
    }
  });

  const base = (startedAt: number, request: FastifyRequest) => ({
    requestId: request.id,
    userId: request.apiKey!.userId,
    keyId: request.apiKey!.keyId,
    keyLimitNano: request.apiKey!.limitNano,
    maxTokens: 0,
    choices: 1,
    startedAt,
    provider: undefined,
    // Audio bodies carry neither `user` nor `provider`: the headers say who sent it.
    origin: requestOrigin(request, {}),
  });

  const transcribe =
    (kind: 'transcription' | 'translation') => async (request: FastifyRequest, reply: FastifyReply) => {
      const startedAt = performance.now();
      const body = request.body as TranscriptionBody;
      const file = body.file as Partial<TranscriptionBody['file']>;
      if (!file || !Buffer.isBuffer(file.data))
        throw new ApiError('invalid_request', 'file must be an uploaded audio file.', { param: 'file' });
      if (file.data.length === 0)
        throw new ApiError('invalid_request', 'The audio file is empty.', { param: 'file' });
      if (file.data.length > media.maxAudioBytes)
        throw new ApiError('payload_too_large', `The audio file exceeds ${media.maxAudioBytes} bytes.`, {
          param: 'file',
        });
      const duration = audioDurationBound(file.data);
      // A WAV file's length is known: refuse what is too long. Other containers' bound is only a
      // ceiling from their size, so it is capped, not refused.
      if (duration.wav && duration.seconds > media.maxAudioSeconds) {
        throw new ApiError('invalid_request', `The audio is longer than ${media.maxAudioSeconds} seconds.`, {
          param: 'file',
        });
      }
      findModel(deps.router.index, body.model, kind);
      const seconds = Math.min(duration.seconds, media.maxAudioSeconds);
      const format: TranscriptionFormat = body.response_format ?? 'json';
      const job: InferenceJob = {
        ...base(startedAt, request),
        kind,
        model: body.model,
        nodeRequest: {
          model: body.model,
          file: { name: file.filename!, mimeType: file.contentType!, data: file.data.toString('base64') },
          ...(body.language ? { language: body.language } : {}),
          ...(body.prompt ? { prompt: body.prompt } : {}),
          response_format: format,
          ...(body.temperature !== undefined ? { temperature: body.temperature } : {}),
        },
        stream: false,
        promptTokensBound: Math.max(1, Math.ceil(seconds * AUDIO_UNITS_PER_SECOND)),
        includeUsage: false,
      };
      const result = await routeRequest(deps, job);
      reply.header('x-gpumesh-node', result.nodeId);
      reply.header('x-gpumesh-cost', String(result.response.usage.cost));
      const rendered = renderTranscription(result.response, format, kind);
      if (typeof rendered === 'string') return reply.type('text/plain; charset=utf-8').send(rendered);
      return rendered;
    };

  const multipart = {
    bodyLimit: media.maxAudioBytes + MULTIPART_OVERHEAD_BYTES,
    onRequest: apiKey,
  };
  app.post(
    '/v1/audio/transcriptions',
    {
      ...multipart,
      schema: {
        tags: ['v1'],
        security: API_KEY,
        operationId: 'createTranscription',
        summary: 'Transcribe audio (OpenAI; multipart), billed by seconds of audio',
        consumes: ['multipart/form-data'],
        body: TranscriptionBody,
      },
    },
    transcribe('transcription'),
  );
  app.post(
    '/v1/audio/translations',
    {
      ...multipart,
      schema: {
        tags: ['v1'],
        security: API_KEY,
        operationId: 'createTranslation',
        summary: 'Translate audio into English text (OpenAI; multipart), billed by seconds of audio',
        consumes: ['multipart/form-data'],
        body: TranscriptionBody,
      },
    },
    transcribe('translation'),
  );

  app.post(
    '/v1/audio/speech',
    {
      bodyLimit: ctx.config.bodyLimitBytes,
      onRequest: apiKey,
      schema: {
        tags: ['v1'],
        security: API_KEY,
        operationId: 'createSpeech',
        summary: 'Text to speech (OpenAI), streamed as the node produces it, billed by characters',
        body: SpeechBody,
      },
    },
    async (request, reply) => {
      const startedAt = performance.now();
      const body = request.body as SpeechBody;
      findModel(deps.router.index, body.model, 'speech');
      const format: SpeechFormat = body.response_format ?? 'mp3';
      const { stream_format: _streamFormat, ...nodeRequest } = body;
      const job: InferenceJob = {
        ...base(startedAt, request),
        kind: 'speech',
        model: body.model,
        nodeRequest: { ...nodeRequest, response_format: format },
        stream: true,
        promptTokensBound: [...body.input].length,
        includeUsage: true,
      };
      const sink = openAudioStream(request, reply, SPEECH_MEDIA_TYPES[format]);
      try {
        await routeRequest(deps, job, sink);
      } catch (error) {
        if (!sink.started) throw error; // nothing sent yet: a plain HTTP error
        sink.finish({
          error: (error instanceof ApiError ? error : new ApiError('internal_error')).toBody().error,
        });
      }
      return reply;
    },
  );
}
