/**
 * The relay's voice path: the openai runtime in front of a local OpenAI-compatible audio server —
 * a stand-in for whisper.cpp's server or LocalAI (which can't run here), itself backed by the real
 * built-in engines (espeak-ng, pocketsphinx) — with the real multipart and streaming on the wire.
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { JsonObject, Runtime } from '../runtime.js';
import { createVoiceRuntime, ESPEAK_MODEL_ID, POCKETSPHINX_MODEL_ID } from '../voice/voice-runtime.js';
import { createOpenAiRuntime } from './openai-runtime.js';

const engines = createVoiceRuntime({ phrases: ['open the door please', 'hello world'] });
let server: Server;
let relay: Runtime;
/** What the stand-in received, per request. */
const seen: { path: string; model: string; format?: string; fileSha?: string }[] = [];
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

async function bodyOf(req: IncomingMessage): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

beforeAll(async () => {
  await engines.load();
  server = createServer(async (req, res) => {
    const body = await bodyOf(req);
    if (req.url === '/v1/models') {
      res.end(JSON.stringify({ data: [{ id: 'whisper-1' }, { id: 'tts-1' }] }));
    } else if (req.url === '/v1/audio/transcriptions') {
      const form = await new Request('http://stand-in/', {
        method: 'POST',
        headers: { 'content-type': String(req.headers['content-type']) },
        body: new Uint8Array(body),
      }).formData();
      const file = form.get('file') as File;
      const bytes = Buffer.from(await file.arrayBuffer());
      seen.push({
        path: req.url,
        model: String(form.get('model')),
        format: String(form.get('response_format')),
        fileSha: sha(bytes),
      });
      const heard = await engines.run({
        kind: 'transcription',
        model: POCKETSPHINX_MODEL_ID,
        request: {
          model: POCKETSPHINX_MODEL_ID,
          file: { name: file.name, mimeType: file.type, data: bytes.toString('base64') },
        },
        stream: false,
      });
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          task: 'transcribe',
          language: 'english',
          duration: heard.duration,
          text: heard.text,
          segments: heard.segments,
        }),
      );
    } else if (req.url === '/v1/audio/speech') {
      const request = JSON.parse(body.toString()) as JsonObject;
      seen.push({ path: req.url, model: String(request.model) });
      res.writeHead(200, { 'content-type': 'audio/wav' });
      await engines.run({
        kind: 'speech',
        model: ESPEAK_MODEL_ID,
        request: { ...request, model: ESPEAK_MODEL_ID },
        stream: true,
        onChunk: (chunk) => res.write(Buffer.from(String(chunk.data), 'base64')),
      });
      res.end();
    } else res.writeHead(404).end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  relay = createOpenAiRuntime({
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    name: 'whisper.cpp',
    models: [
      { id: 'whisper', upstream: 'whisper-1', family: 'voice', kinds: ['transcription', 'translation'] },
      { id: 'tts', upstream: 'tts-1', family: 'voice', kinds: ['speech'] },
    ],
  });
  await relay.load();
});
afterAll(async () => {
  server?.close();
  await engines.close();
});

describe('relaying voice', () => {
  test('default: speech streams through as audio chunks; the WAV, posted as multipart, comes back as its text with its seconds', async () => {
    const chunks: JsonObject[] = [];
    const spoken = await relay.run({
      kind: 'speech',
      model: 'tts',
      request: { model: 'tts', input: 'hello world', voice: 'alloy', response_format: 'wav' },
      stream: true,
      onChunk: (chunk) => chunks.push(chunk),
    });
    const wav = Buffer.concat(chunks.map((c) => Buffer.from(String(c.data), 'base64')));
    expect(seen.at(-1)).toEqual({ path: '/v1/audio/speech', model: 'tts-1' });
    expect(wav.toString('ascii', 0, 4)).toBe('RIFF');
    expect(spoken).toMatchObject({ object: 'audio.speech', bytes: wav.length, usage: { characters: 11 } });

    const heard = await relay.run({
      kind: 'transcription',
      model: 'whisper',
      request: {
        model: 'whisper',
        file: { name: 'hello.wav', mimeType: 'audio/wav', data: wav.toString('base64') },
      },
      stream: false,
    });
    expect(seen.at(-1)).toEqual({
      path: '/v1/audio/transcriptions',
      model: 'whisper-1',
      format: 'verbose_json',
      fileSha: sha(wav),
    });
    expect(heard.text).toBe('hello world');
    expect(heard.usage.seconds).toBeCloseTo((wav.length - 44) / 44_100, 2);
  });

  test('error: a kind the model does not serve is invalid_request (NODE_PROTOCOL.md §9 "Odd jobs"), before anything is sent', async () => {
    const before = seen.length;
    await expect(
      relay.run({
        kind: 'speech',
        model: 'whisper',
        request: { model: 'whisper', input: 'x', voice: 'alloy' },
        stream: true,
      }),
    ).rejects.toMatchObject({ code: 'invalid_request' });
    expect(seen.length).toBe(before);
  });
});
