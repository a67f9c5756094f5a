import { parseFrame } from '@gpumesh/protocol';
import { describe, expect, test } from 'vitest';
import { buildManifest } from './manifest.js';
import type { ServedModel } from './runtimes/runtime.js';

const hardware = {
  gpus: [],
  cpu: { model: 'x', cores: 1, threads: 1, arch: 'x64' },
  ramBytes: 1,
  backend: 'cpu' as const,
};
const chat: ServedModel = {
  id: 'chat',
  family: 'chat',
  contextLength: 64,
  maxConcurrency: 1,
  cachesPrefixes: true,
};
const embed: ServedModel = { id: 'embed', family: 'embedding', contextLength: 64, maxConcurrency: 1 };
const price = { currency: 'USD', inputPerMTok: '100000001', outputPerMTok: '200000000' } as const;

const offers = (prices: Record<string, typeof price & { cachedInputPerMTok?: string }>) =>
  buildManifest({
    nodeId: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
    role: 'cpu',
    hardware,
    runtime: { name: 'node-llama-cpp', version: '3' },
    models: [chat, embed],
    prices,
    defaultPrice: price,
    allowedScopes: ['infer.chat', 'infer.embed'],
  }).models.map((offer) => offer.price);

describe('buildManifest', () => {
  test('default: a model that caches prefixes offers a cached input price of 10 % of its input price; others none', () => {
    expect(offers({})).toEqual([{ ...price, cachedInputPerMTok: '10000000' }, price]);
  });

  test('behavior: a configured cached price is offered as set, and only by a model that caches', () => {
    const cached = { ...price, cachedInputPerMTok: '10' };
    expect(offers({ chat: cached, embed: cached })).toEqual([cached, price]);
  });

  test('behavior: the manifest frame validates (cachedInputPerMTok ≤ inputPerMTok)', () => {
    const manifest = buildManifest({
      nodeId: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
      role: 'cpu',
      hardware,
      runtime: { name: 'node-llama-cpp', version: '3' },
      models: [chat],
      prices: {},
      defaultPrice: price,
      allowedScopes: ['infer.chat'],
    });
    const frame = { v: 0, type: 'manifest', manifest, signature: `0x${'11'.repeat(65)}` };
    expect(parseFrame(JSON.stringify(frame))).toEqual(frame);
  });
});
