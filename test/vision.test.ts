/**
 * Vision through the relay: the real gpumesh-node daemon (runtime `openai`) in front of a local
 * OpenAI-compatible server — a STAND-IN for vLLM or Ollama serving a vision model, which cannot
 * run on these machines: it answers with the SHA-256 of each image it received. Client: the
 * official `openai` SDK. A PNG as a data URL, and one behind an http URL the coordinator fetches,
 * reach the server byte for byte; URLs to private addresses are refused by the SSRF guard.
 *
 * The image server listens on 127.0.0.1, which the guard refuses by default: this test allows that
 * one address through the config's test-only allowance (media.imageFetchAllowAddresses); 127.0.0.2
 * and 10.0.0.0/8 stay refused, as every loopback and private address is without it.
 */

import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  createFixedReplyRuntime,
  type OpenAiCompatibleServer,
  type SpawnedNodeDaemon,
  spawnNodeDaemon,
  startOpenAiCompatibleServer,
} from '@gpumesh/node/testing';
import { imageTokensBound, signOwnerProof } from '@gpumesh/protocol';
import type { FastifyInstance } from 'fastify';
import OpenAI from 'openai';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { until } from '../coordinator/src/testing/until.js';
import { estimatePromptTokens } from '../coordinator/src/v1/estimate-prompt-tokens.js';
import { newApiClient } from './support/api-client.js';
import { nodeIdOf, startCoordinator, type TestCoordinator } from './support/tiny-node-network.js';

const USD = 1_000_000_000n;
const MODEL = 'vision-standin';
/** A 2 × 3 PNG (real pixels), and a 1 × 1 one. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAIAAAADCAIAAAA2iEnWAAAAFklEQVR4nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg==',
  'base64',
);
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

let coordinator: TestCoordinator;
let app: FastifyInstance;
let client: OpenAI;
let standIn: OpenAiCompatibleServer;
let images: Server;
let imageBase: string;
let node: SpawnedNodeDaemon | undefined;
const dir = mkdtempSync(path.join(tmpdir(), 'gm-vision-'));
const owner = privateKeyToAccount(generatePrivateKey());
/** What the stand-in received: each request's images' SHA-256. */
const received: string[][] = [];

beforeAll(async () => {
  // The stand-in: answers each chat with the hashes of the data-URL images it got.
  const fixed = createFixedReplyRuntime({
    models: [{ id: MODEL, family: 'chat', contextLength: 8192, maxConcurrency: 2 }],
  });
  standIn = await startOpenAiCompatibleServer({
    ...fixed,
    async run(job) {
      const parts = (job.request.messages as { content: unknown }[]).flatMap((m) =>
        Array.isArray(m.content) ? (m.content as { type: string; image_url?: { url: string } }[]) : [],
      );
      const hashes = parts
        .filter((p) => p.type === 'image_url')
        .map((p) => {
          const match = /^data:image\/png;base64,(.*)$/.exec(p.image_url!.url);
          return match
            ? sha(Buffer.from(match[1]!, 'base64'))
            : `not a data URL: ${p.image_url!.url.slice(0, 40)}`;
        });
      received.push(hashes);
      // Asked to, the stand-in claims a million prompt tokens: the coordinator's bound must hold.
      const inflate = JSON.stringify(job.request.messages).includes('inflate');
      return {
        id: 'chatcmpl-standin',
        object: 'chat.completion',
        created: 0,
        model: MODEL,
        choices: [
          { index: 0, message: { role: 'assistant', content: hashes.join(' ') }, finish_reason: 'stop' },
        ],
        usage: inflate
          ? { prompt_tokens: 1_000_000, completion_tokens: 20, total_tokens: 1_000_020 }
          : { prompt_tokens: 1030, completion_tokens: 20, total_tokens: 1050 },
      };
    },
  });
  images = createServer((req, res) => {
    if (req.url === '/cat.png') {
      res.writeHead(200, { 'content-type': 'image/png' });
      res.end(PNG);
    } else if (req.url === '/big.png') {
      res.writeHead(200, { 'content-type': 'image/png' });
      res.end(Buffer.concat([PNG, randomBytes(300_000)]));
    } else res.writeHead(404).end();
  });
  images.listen(0, '127.0.0.1');
  await once(images, 'listening');
  imageBase = `http://127.0.0.1:${(images.address() as AddressInfo).port}`;

  const ownerAddress = owner.address.toLowerCase();
  coordinator = await startCoordinator('vision', {
    overrides: {
      media: { maxImages: 3, maxImageBytes: 256 * 1024, imageFetchAllowAddresses: ['127.0.0.1'] },
    },
    // Vision needs tier basic; staking itself is tested against anvil in voice.test.ts.
    tierOf: async (o) => (o.toLowerCase() === ownerAddress ? 'basic' : 'none'),
  });
  ({ app } = coordinator);
  const { base } = coordinator;
  const { key } = await newApiClient(app, {
    keyName: 'vision',
    creditNano: 10n * USD,
    creditRef: 'vision-seed',
    account: owner,
  });
  client = new OpenAI({ apiKey: key, baseURL: `${base}/v1`, maxRetries: 0 });

  mkdirSync(path.join(dir, 'state'), { recursive: true });
  const configFile = path.join(dir, 'node.json');
  writeFileSync(configFile, JSON.stringify({ models: [{ id: MODEL, family: 'vision' }] }));
  const nodeId = await nodeIdOf(dir);
  const proof = await signOwnerProof(nodeId, owner);
  node = spawnNodeDaemon({
    coordinator: base,
    dir,
    args: [
      '--runtime',
      'openai',
      '--openai-url',
      standIn.baseUrl,
      '--config',
      configFile,
      '--owner-address',
      proof.address,
      '--owner-signature',
      proof.signature,
    ],
  });
  await until(() => app.hub.index.pick({ modelId: MODEL }).ok, 60_000);
}, 120_000);

afterAll(async () => {
  await node?.stop().catch(() => {});
  await coordinator?.close();
  await standIn?.close();
  images?.close();
  rmSync(dir, { recursive: true, force: true });
});

const ask = (url: string, more: OpenAI.ChatCompletionContentPart[] = []) =>
  client.chat.completions.create({
    model: MODEL,
    max_tokens: 32,
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image_url', image_url: { url } },
          ...more,
        ],
      },
    ],
  });

describe('vision through the relay', () => {
  test('default: a PNG data URL reaches the local server byte for byte; tokens billed within the image bound', async () => {
    const answer = await ask(`data:image/png;base64,${PNG.toString('base64')}`);
    expect(received.at(-1)).toEqual([sha(PNG)]);
    expect(answer.choices[0]!.message.content).toBe(sha(PNG));
    // 1,030 prompt tokens claimed: under the bound (the text's + 1,024 + ⌈2·3/196⌉ for the image).
    expect(answer.usage).toMatchObject({ prompt_tokens: 1030, completion_tokens: 20 });
    expect((answer.usage as unknown as { cost: number }).cost).toBeGreaterThan(0);
  });

  test('behavior: a node claiming more prompt tokens than the text and image bound is billed the bound', async () => {
    const content = [{ type: 'text' as const, text: 'inflate' }];
    const answer = await client.chat.completions.create({
      model: MODEL,
      max_tokens: 32,
      messages: [
        {
          role: 'user',
          content: [
            ...content,
            { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG.toString('base64')}` } },
          ],
        },
      ],
    });
    const bound =
      estimatePromptTokens('chat', { messages: [{ role: 'user', content }] }) + imageTokensBound(2, 3);
    expect(answer.usage?.prompt_tokens).toBe(bound);
    expect(bound).toBeLessThan(1200);
  });

  test('default: an http URL is fetched by the coordinator and sent as data', async () => {
    const answer = await ask(`${imageBase}/cat.png`);
    expect(received.at(-1)).toEqual([sha(PNG)]);
    expect(answer.choices[0]!.message.content).toBe(sha(PNG));
  });

  test('error: the SSRF guard refuses loopback and private addresses not allowed', async () => {
    const seen = received.length;
    const port = (images.address() as AddressInfo).port;
    for (const url of [
      `http://127.0.0.2:${port}/cat.png`,
      'http://10.1.2.3/cat.png',
      'http://169.254.169.254/latest',
    ]) {
      await expect(ask(url)).rejects.toMatchObject({ status: 400, code: 'invalid_request' });
    }
    expect(received.length).toBe(seen);
  });

  test('error: limits — too many images 400, too many bytes 413, not an image 400', async () => {
    const png = { type: 'image_url' as const, image_url: { url: `${imageBase}/cat.png` } };
    await expect(ask(`${imageBase}/cat.png`, [png, png, png])).rejects.toMatchObject({ status: 400 });
    await expect(ask(`${imageBase}/big.png`)).rejects.toMatchObject({ status: 413 });
    await expect(
      ask(`data:image/png;base64,${Buffer.from('hello').toString('base64')}`),
    ).rejects.toMatchObject({
      status: 400,
    });
  });
});
