/**
 * Voice end to end, all real: a coordinator on a real anvil chain, the gpumesh-node daemon with
 * its built-in voice runtime (espeak-ng, sox, pocketsphinx with Debian's US-English model), and the
 * official `openai` SDK as the client. An unstaked node offering voice is not routed voice jobs;
 * once its owner stakes 100 TOK (tier basic) and it reconnects, `/v1/audio/speech` says "open the
 * door please" to WAV, and that WAV sent to `/v1/audio/transcriptions` comes back as that text —
 * the recognizer confined to a phrase list (`--voice-phrases`, a JSGF grammar): pocketsphinx's
 * general language model hears espeak-ng's voice badly. Both billed by their units.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type SpawnedNodeDaemon, spawnNodeDaemon } from '@gpumesh/node/testing';
import { signOwnerProof } from '@gpumesh/protocol';
import type { FastifyInstance } from 'fastify';
import OpenAI, { toFile } from 'openai';
import { parseEther } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { TestDatabase } from '../coordinator/src/testing/test-backends.js';
import { until } from '../coordinator/src/testing/until.js';
import { chainOverrides, type Devnet, proxyAddressOf, startDevnet } from './chain-fixture.js';
import { newApiClient } from './support/api-client.js';
import { nodeIdOf, startCoordinator, type TestCoordinator } from './support/tiny-node-network.js';

const USD = 1_000_000_000n;
const PHRASES = ['open the door please', 'hello world', 'close the window'];
/** The node's prices (nanousd): per second of audio, per million characters. */
const PER_SECOND = 100_000n;
const PER_MCHAR = 1_000_000_000n;
const FEE_BPS = 500n;

let devnet: Devnet;
let coordinator: TestCoordinator;
let store: TestDatabase;
let app: FastifyInstance;
let base: string;
let client: OpenAI;
let jwt: string;
let nodeId: string;
let node: SpawnedNodeDaemon | undefined;
const dir = mkdtempSync(path.join(tmpdir(), 'gm-voice-'));
const owner = privateKeyToAccount(generatePrivateKey());

const costOf = (units: bigint, pricePerMillion: bigint) => {
  const provider = (units * pricePerMillion + 999_999n) / 1_000_000n;
  return provider + (provider * FEE_BPS + 9_999n) / 10_000n;
};
/** The request's usage row, once its settlement committed (it may commit after the answer). */
const chargedFor = async (requestId: string) => {
  const row = () =>
    store.db
      .selectFrom('usage_records')
      .select(['kind', 'prompt_tokens', 'completion_tokens', 'cost_nano'])
      .where('request_id', '=', requestId)
      .executeTakeFirst();
  await until(async () => (await row()) !== undefined);
  const found = (await row())!;
  return { ...found, cost_nano: BigInt(found.cost_nano) };
};
const startNode = async () => {
  const proof = await signOwnerProof(nodeId, owner);
  node = spawnNodeDaemon({
    coordinator: base,
    dir,
    args: [
      '--runtime',
      'voice',
      '--voice-phrases',
      PHRASES.join('|'),
      '--price-per-audio-second',
      String(PER_SECOND),
      '--price-per-mchar',
      String(PER_MCHAR),
      '--owner-address',
      proof.address,
      '--owner-signature',
      proof.signature,
    ],
  });
  await until(() => app.hub.session(nodeId)?.ready === true, 60_000);
};

beforeAll(async () => {
  devnet = await startDevnet();
  coordinator = await startCoordinator('voice', {
    overrides: { platformFeeBps: Number(FEE_BPS), ...chainOverrides(devnet) },
  });
  ({ app, store, base } = coordinator);
  const user = await newApiClient(app, {
    keyName: 'voice',
    creditNano: 10n * USD,
    creditRef: 'voice-seed',
    account: owner,
  });
  jwt = user.jwt;
  const { key } = user;
  client = new OpenAI({ apiKey: key, baseURL: `${base}/v1`, maxRetries: 0 });
  // The owner's proxy wallet pays its own staking gas.
  await devnet.fund(await proxyAddressOf(app, jwt), { nativeWei: parseEther('150') });
  nodeId = await nodeIdOf(dir);
  await startNode();
}, 120_000);

afterAll(async () => {
  await node?.stop().catch(() => {});
  await coordinator?.close();
  await devnet?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('voice', () => {
  test('behavior: an unstaked node offering voice is not routed voice jobs', async () => {
    expect(app.hub.session(nodeId)?.tier).toBe('none');
    expect(app.hub.index.offers('espeak-ng')?.size ?? 0).toBe(0);
    await expect(
      client.audio.speech.create({
        model: 'espeak-ng',
        input: 'hello world',
        voice: 'alloy',
        response_format: 'wav',
      }),
    ).rejects.toMatchObject({ status: 404, code: 'model_not_found' });
  });

  test('default: after its owner stakes to tier basic, speech to WAV and back to the same text, each billed by its unit', async () => {
    const staked = await app.inject({
      method: 'POST',
      url: '/tx',
      headers: { authorization: `Bearer ${jwt}` },
      payload: { method: 'chain_stake', params: [owner.address, '100.0000 TOK'] },
    });
    expect(staked.statusCode).toBe(200);
    // The tier is read when the node authenticates: it reconnects.
    await node!.stop();
    await startNode();
    expect(app.hub.session(nodeId)?.tier).toBe('basic');
    await until(
      () =>
        app.hub.index.pick({ modelId: 'espeak-ng' }).ok &&
        app.hub.index.pick({ modelId: 'pocketsphinx-en-us' }).ok,
      10_000,
    );

    // The catalog and the /network page show the family and the unit price.
    const listed = (await client.models.list()).data as unknown as {
      id: string;
      family: string;
      pricing: { unit: string; prompt: { usdNano: string } };
    }[];
    expect(listed.map((m) => [m.id, m.family, m.pricing.unit, m.pricing.prompt.usdNano])).toEqual([
      ['espeak-ng', 'voice', 'per_million_characters', String(PER_MCHAR)],
      ['pocketsphinx-en-us', 'voice', 'per_second', String(PER_SECOND)],
    ]);
    const page = (await app.inject({ method: 'GET', url: '/network' })).body;
    expect(page).toContain('per audio second');
    expect(page).toContain('per M characters');

    const phrase = 'open the door please';
    const spoken = await client.audio.speech
      .create({ model: 'espeak-ng', input: phrase, voice: 'alloy', response_format: 'wav' })
      .withResponse();
    expect(spoken.response.headers.get('content-type')).toBe('audio/wav');
    expect(spoken.response.headers.get('x-gpumesh-node')?.toLowerCase()).toBe(nodeId.toLowerCase());
    const wav = Buffer.from(await spoken.data.arrayBuffer());
    expect(wav.toString('ascii', 0, 4)).toBe('RIFF');
    expect(wav.length).toBeGreaterThan(20_000); // ~1.4 s of 22,050 Hz 16-bit speech
    const speech = await chargedFor(spoken.response.headers.get('x-request-id')!);
    // The body is audio: the charge goes in the x-gpumesh-cost trailer (read with node:http).
    const trailer = await new Promise<string | undefined>((resolve, reject) => {
      const req = request(
        `${base}/v1/audio/speech`,
        {
          method: 'POST',
          headers: { authorization: `Bearer ${client.apiKey}`, 'content-type': 'application/json' },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.trailers['x-gpumesh-cost']));
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify({ model: 'espeak-ng', input: phrase, voice: 'alloy', response_format: 'wav' }));
    });
    expect(trailer).toBe(String(Number(costOf(BigInt(phrase.length), PER_MCHAR)) / 1e9));
    expect(speech).toEqual({
      kind: 'speech',
      prompt_tokens: phrase.length,
      completion_tokens: 0,
      cost_nano: costOf(BigInt(phrase.length), PER_MCHAR),
    });

    const heard = await client.audio.transcriptions
      .create({ file: await toFile(wav, 'door.wav', { type: 'audio/wav' }), model: 'pocketsphinx-en-us' })
      .withResponse();
    expect(heard.data.text).toBe(phrase);
    const usage = (heard.data as unknown as { usage: { type: string; seconds: number; cost: number } }).usage;
    expect(usage.type).toBe('duration');
    // The WAV's own length (its data bytes over 44,100 bytes/s), to the millisecond.
    expect(usage.seconds).toBeCloseTo((wav.length - 44) / 44_100, 2);
    const ms = BigInt(Math.round(usage.seconds * 1000));
    const transcription = await chargedFor(heard.response.headers.get('x-request-id')!);
    expect(transcription).toEqual({
      kind: 'transcription',
      prompt_tokens: Number(ms),
      completion_tokens: 0,
      cost_nano: costOf(ms, PER_SECOND * 1000n),
    });
    expect(usage.cost).toBe(Number(transcription.cost_nano) / 1e9);

    // The usage summary: one voice row with both units (two speeches, one transcription), no tokens.
    const summary = (
      await app.inject({
        method: 'GET',
        url: '/api/router/usage',
        headers: { authorization: `Bearer ${jwt}` },
      })
    ).json() as { totals: { promptTokens: number }; byFamily: Record<string, unknown>[] };
    expect(summary.totals.promptTokens).toBe(0);
    expect(summary.byFamily).toEqual([
      expect.objectContaining({
        family: 'voice',
        requests: 3,
        promptTokens: 0,
        completionTokens: 0,
        audioSeconds: Number(ms) / 1000,
        characters: 2 * phrase.length,
        costNano: String(2n * speech.cost_nano + transcription.cost_nano),
      }),
    ]);
  }, 120_000);

  test('error: bad input is a clear 400/413, never a crash', async () => {
    const form = (file: Buffer, fields: Record<string, string> = {}) => {
      const body = new FormData();
      body.append('file', new Blob([new Uint8Array(file)], { type: 'audio/wav' }), 'a.wav');
      body.append('model', 'pocketsphinx-en-us');
      for (const [k, v] of Object.entries(fields)) body.append(k, v);
      return fetch(`${base}/v1/audio/transcriptions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${client.apiKey}` },
        body,
      });
    };
    const wav = (seconds: number) => {
      const header = Buffer.alloc(44);
      header.write('RIFF', 0);
      header.write('WAVEfmt ', 8);
      header.writeUInt32LE(16, 16);
      header.writeUInt16LE(1, 20);
      header.writeUInt16LE(1, 22);
      header.writeUInt32LE(8000, 24);
      header.writeUInt32LE(16_000, 28);
      header.writeUInt16LE(2, 32);
      header.writeUInt16LE(16, 34);
      header.write('data', 36);
      header.writeUInt32LE(16_000 * seconds, 40);
      return Buffer.concat([header, Buffer.alloc(16_000 * seconds)]);
    };
    const tooLong = await form(wav(601));
    expect(tooLong.status).toBe(413); // 9.6 MB: over the 2 MiB file limit before its length counts
    const junkFormat = await form(wav(1), { response_format: 'docx' });
    expect(junkFormat.status).toBe(400);
    expect(((await junkFormat.json()) as { error: { code: string } }).error.code).toBe('invalid_request');
    const unknown = await form(wav(1), { colour: 'blue' });
    expect(unknown.status).toBe(400);
    await expect(
      client.audio.speech.create({ model: 'espeak-ng', input: 'x'.repeat(4097), voice: 'alloy' }),
    ).rejects.toMatchObject({ status: 400 });
    await expect(
      client.audio.speech.create({ model: 'pocketsphinx-en-us', input: 'hi', voice: 'alloy' }),
    ).rejects.toMatchObject({ status: 400, code: 'invalid_request' });
    await expect(
      client.audio.speech.create({ model: 'espeak-ng', input: 'hi', voice: 'alloy', response_format: 'mp3' }),
    ).rejects.toMatchObject({ status: 400 });
  });
});
