import { randomUUID } from 'node:crypto';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { createFrame } from '../../create-frame.js';
import type { Manifest, ModelOffer } from '../../manifest.js';
import {
  AudioChunkSchema,
  MAX_AUDIO_CHUNK_BYTES,
  TranscriptionResponseSchema,
  type VoiceKind,
} from '../../media.js';
import { ConformanceFailure, ConformanceSkip, check } from '../failure.js';
import { checkChatCompletion, checkUsage } from '../openai.js';
import { admitAndSettle } from './admit-node.js';
import { collectJob, modelOf, requireResult } from './collect-job.js';
import type { NodeScenario } from './context.js';

const ADMITTED = ['handshake', 'manifest'] as const;
const checkAudioChunk = TypeCompiler.Compile(AudioChunkSchema);
const checkTranscription = TypeCompiler.Compile(TranscriptionResponseSchema);

/** A 1 × 1 PNG: what the vision scenario shows the node. */
export const KIT_PNG_DATA_URL =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
/** What the speech scenario asks the node to say (20 characters). */
export const KIT_SPEECH_INPUT = 'open the door please';
/** The transcription scenario's audio: a 440 Hz tone of this many seconds, 8 kHz 16-bit mono WAV (24 KB, so the job fits a 65,536-byte frame). */
export const KIT_AUDIO_SECONDS = 1.5;

/** A 16-bit mono PCM WAV of a sine tone. */
export function toneWav(seconds: number, sampleRate = 16_000, hz = 440): Buffer {
  const samples = Math.round(seconds * sampleRate);
  const wav = Buffer.alloc(44 + samples * 2);
  wav.write('RIFF', 0, 'ascii');
  wav.writeUInt32LE(36 + samples * 2, 4);
  wav.write('WAVEfmt ', 8, 'ascii');
  wav.writeUInt32LE(16, 16);
  wav.writeUInt16LE(1, 20);
  wav.writeUInt16LE(1, 22);
  wav.writeUInt32LE(sampleRate, 24);
  wav.writeUInt32LE(sampleRate * 2, 28);
  wav.writeUInt16LE(2, 32);
  wav.writeUInt16LE(16, 34);
  wav.write('data', 36, 'ascii');
  wav.writeUInt32LE(samples * 2, 40);
  for (let i = 0; i < samples; i++)
    wav.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * hz * i) / sampleRate)), 44 + i * 2);
  return wav;
}

/** The first voice model serving `kind`; skips the scenario when there is none. */
function voiceModelOf(manifest: Manifest, kind: VoiceKind): ModelOffer {
  const model = manifest.models.find((m) => m.family === 'voice' && m.kinds?.includes(kind));
  if (!model) throw new ConformanceSkip(`the manifest serves no voice model for ${kind}`);
  return model;
}

/** Vision and voice scenarios (NODE_PROTOCOL.md §9 "Vision", "Transcription and translation", "Speech"). */
export const MEDIA_SCENARIOS: readonly NodeScenario[] = [
  {
    name: 'vision',
    description:
      'vision job (a chat with a PNG data URL): one chat.completion with usage counting the image, no chunks',
    needs: ADMITTED,
    run: async (context) => {
      const { socket, settings } = context;
      const { manifest } = await admitAndSettle(context);
      const model = modelOf(manifest, 'vision').id;
      const job = createFrame('job', {
        jobId: `job-${randomUUID()}`,
        kind: 'vision',
        model,
        request: {
          model,
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: 'What is in this image?' },
                { type: 'image_url', image_url: { url: KIT_PNG_DATA_URL } },
              ],
            },
          ],
          max_tokens: 8,
        },
        stream: false,
        timeoutMs: settings.jobTimeoutMs,
      });
      socket.send(job);
      const outcome = await collectJob(socket, job.jobId, settings.jobTimeoutMs);
      check(outcome.chunks.length === 0, `${outcome.chunks.length} chunks for a stream: false job`);
      const result = requireResult(outcome);
      checkUsage(result.response.usage, true, checkChatCompletion(result.response));
    },
  },
  {
    name: 'speech',
    description:
      'speech job: audio.chunk frames of ≤ 32 KiB from seq 0 (a WAV when asked for wav), then audio.speech whose bytes are the chunks’ and whose usage counts the characters',
    needs: ADMITTED,
    run: async (context) => {
      const { socket, settings } = context;
      const { manifest } = await admitAndSettle(context);
      const model = voiceModelOf(manifest, 'speech').id;
      const job = createFrame('job', {
        jobId: `job-${randomUUID()}`,
        kind: 'speech',
        model,
        request: { model, input: KIT_SPEECH_INPUT, voice: 'alloy', response_format: 'wav' },
        stream: true,
        timeoutMs: settings.jobTimeoutMs,
      });
      socket.send(job);
      const outcome = await collectJob(socket, job.jobId, settings.jobTimeoutMs);
      check(outcome.chunks.length > 0, 'no audio chunk for a speech job');
      const pieces = outcome.chunks.map((c, i) => {
        if (!checkAudioChunk.Check(c.chunk)) throw new ConformanceFailure(`chunk ${i} is not an audio.chunk`);
        const bytes = Buffer.from(c.chunk.data, 'base64');
        check(
          bytes.length <= MAX_AUDIO_CHUNK_BYTES,
          `chunk ${i} carries ${bytes.length} bytes (at most ${MAX_AUDIO_CHUNK_BYTES})`,
        );
        return bytes;
      });
      const audio = Buffer.concat(pieces);
      check(audio.toString('ascii', 0, 4) === 'RIFF', 'the audio asked as wav does not start with RIFF');
      const response = requireResult(outcome).response;
      check(
        response.object === 'audio.speech',
        `response.object is ${String(response.object)}, not audio.speech`,
      );
      check(
        response.bytes === audio.length,
        `response.bytes ${String(response.bytes)} ≠ ${audio.length} bytes sent`,
      );
      const characters = [...KIT_SPEECH_INPUT].length;
      check(
        response.usage.characters === characters,
        `usage.characters ${String(response.usage.characters)}, the input has ${characters}`,
      );
    },
  },
  {
    name: 'transcription',
    description:
      'transcription job (a 1.5 s WAV as base64): one verbose transcription, its duration and usage.seconds the audio’s length (± 50 ms), no chunks',
    needs: ADMITTED,
    run: async (context) => {
      const { socket, settings } = context;
      const { manifest } = await admitAndSettle(context);
      const model = voiceModelOf(manifest, 'transcription').id;
      const job = createFrame('job', {
        jobId: `job-${randomUUID()}`,
        kind: 'transcription',
        model,
        request: {
          model,
          file: {
            name: 'tone.wav',
            mimeType: 'audio/wav',
            data: toneWav(KIT_AUDIO_SECONDS, 8000).toString('base64'),
          },
          language: 'en',
          response_format: 'json',
        },
        stream: false,
        timeoutMs: settings.jobTimeoutMs,
      });
      socket.send(job);
      const outcome = await collectJob(socket, job.jobId, settings.jobTimeoutMs);
      check(outcome.chunks.length === 0, `${outcome.chunks.length} chunks for a transcription job`);
      const response = requireResult(outcome).response;
      if (!checkTranscription.Check(response)) {
        const first = checkTranscription.Errors(response).First();
        throw new ConformanceFailure(`not a transcription: ${first ? `${first.path} ${first.message}` : ''}`);
      }
      const near = (x: unknown) => typeof x === 'number' && Math.abs(x - KIT_AUDIO_SECONDS) <= 0.05;
      check(near(response.duration), `duration ${response.duration}, the audio is ${KIT_AUDIO_SECONDS} s`);
      check(
        near(response.usage.seconds),
        `usage.seconds ${String(response.usage.seconds)}, the audio is ${KIT_AUDIO_SECONDS} s`,
      );
    },
  },
];
