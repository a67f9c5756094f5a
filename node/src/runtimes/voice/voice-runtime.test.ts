/**
 * The built-in voice engines, real binaries (espeak-ng, sox, pocketsphinx with Debian's US-English
 * model): speech streamed as audio chunks, transcribed back with a phrase grammar.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { JsonObject } from '../runtime.js';
import { createVoiceRuntime, ESPEAK_MODEL_ID, POCKETSPHINX_MODEL_ID } from './voice-runtime.js';

const PHRASES = ['open the door please', 'hello world', 'close the window'];
const runtime = createVoiceRuntime({ phrases: PHRASES });
beforeAll(() => runtime.load());
afterAll(() => runtime.close());

async function say(input: string, format = 'wav') {
  const chunks: JsonObject[] = [];
  const response = await runtime.run({
    kind: 'speech',
    model: ESPEAK_MODEL_ID,
    request: { model: ESPEAK_MODEL_ID, input, voice: 'alloy', response_format: format },
    stream: true,
    onChunk: (chunk) => chunks.push(chunk),
  });
  const audio = Buffer.concat(chunks.map((c) => Buffer.from(String(c.data), 'base64')));
  return { response, audio, chunks };
}

describe('voice runtime', () => {
  test('default: espeak-ng speaks to WAV chunks; pocketsphinx with the phrase grammar hears the phrase', async () => {
    const { response, audio, chunks } = await say('open the door please');
    expect(audio.toString('ascii', 0, 4)).toBe('RIFF');
    expect(chunks.every((c) => c.object === 'audio.chunk')).toBe(true);
    expect(response).toMatchObject({ object: 'audio.speech', format: 'wav', bytes: audio.length });
    expect(response.usage.characters).toBe(20);
    const heard = await runtime.run({
      kind: 'transcription',
      model: POCKETSPHINX_MODEL_ID,
      request: {
        model: POCKETSPHINX_MODEL_ID,
        file: { name: 'a.wav', mimeType: 'audio/wav', data: audio.toString('base64') },
      },
      stream: false,
    });
    expect(heard.text).toBe('open the door please');
    // 22,050 Hz 16-bit mono: the WAV's data bytes over its byte rate, to the ms.
    expect(heard.usage.seconds).toBeCloseTo((audio.length - 44) / 44_100, 2);
  });

  test('behavior: pcm is 24 kHz 16-bit raw (via sox), flac a FLAC stream', async () => {
    const wav = await say('hello world');
    const pcm = await say('hello world', 'pcm');
    expect(pcm.audio.toString('ascii', 0, 4)).not.toBe('RIFF');
    // The same speech at 24,000 instead of 22,050 samples per second.
    expect(pcm.audio.length / (wav.audio.length - 44)).toBeCloseTo(24_000 / 22_050, 1);
    expect((await say('hello world', 'flac')).audio.toString('ascii', 0, 4)).toBe('fLaC');
  });

  test('error: a format this node cannot make, an unknown voice, undecodable audio, another language', async () => {
    const speech = (request: JsonObject) =>
      runtime.run({
        kind: 'speech',
        model: ESPEAK_MODEL_ID,
        request: { model: ESPEAK_MODEL_ID, input: 'hi', voice: 'alloy', ...request },
        stream: true,
      });
    await expect(speech({ response_format: 'mp3' })).rejects.toMatchObject({ code: 'invalid_request' });
    await expect(speech({ voice: '--help; rm -rf /' })).rejects.toMatchObject({ code: 'invalid_request' });
    const transcription = (file: JsonObject, extra: JsonObject = {}) =>
      runtime.run({
        kind: 'transcription',
        model: POCKETSPHINX_MODEL_ID,
        request: { model: POCKETSPHINX_MODEL_ID, file, ...extra },
        stream: false,
      });
    const junk = {
      name: 'x.wav',
      mimeType: 'audio/wav',
      data: Buffer.from('not audio at all').toString('base64'),
    };
    await expect(transcription(junk)).rejects.toMatchObject({ code: 'invalid_request' });
    await expect(transcription(junk, { language: 'de' })).rejects.toMatchObject({ code: 'invalid_request' });
    await expect(
      runtime.run({ kind: 'speech', model: POCKETSPHINX_MODEL_ID, request: {}, stream: true }),
    ).rejects.toMatchObject({ code: 'invalid_request' });
  });

  test('error: a phrase word the dictionary lacks fails at load', async () => {
    await expect(createVoiceRuntime({ phrases: ['open the xyzzyq'] }).load()).rejects.toMatchObject({
      code: 'config_invalid',
    });
  });
});
