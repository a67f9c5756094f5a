import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openAiTrigger } from './open-ai-trigger.js';

const seen: { url?: string; auth?: string; body: string }[] = [];
const server = createServer((req, res) => {
  let body = '';
  req.on('data', (chunk: Buffer) => {
    body += chunk.toString();
  });
  req.on('end', () => {
    seen.push({ url: req.url, auth: req.headers.authorization, body });
    const ok = req.headers.authorization === 'Bearer sk-good';
    res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' });
    res.end(ok ? '{"answer":"kit-answer"}' : '{"error":{"message":"bad key"}}');
  });
});
let base: string;

beforeAll(async () => {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/`;
});
afterAll(() => {
  server.close();
});

describe('openAiTrigger', () => {
  test('default: posts to the endpoint of the kind with the key, resolves with the body', async () => {
    const trigger = openAiTrigger(base, 'sk-good');
    const text = await trigger({ kind: 'chat', model: 'm', body: { model: 'm', messages: [] } });
    expect(text).toContain('kit-answer');
    await trigger({ kind: 'embedding', model: 'e', body: { model: 'e', input: 'x' } });
    expect(seen.map((s) => s.url)).toEqual(['/v1/chat/completions', '/v1/embeddings']);
    expect(seen[0]?.auth).toBe('Bearer sk-good');
    expect(JSON.parse(seen[1]!.body)).toEqual({ model: 'e', input: 'x' });
  });

  test('error: a non-2xx answer rejects with its status', async () => {
    await expect(openAiTrigger(base, 'sk-bad')({ kind: 'chat', model: 'm', body: {} })).rejects.toThrow(
      /HTTP 401/,
    );
  });
});
