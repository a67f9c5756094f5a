/**
 * Mixed paid traffic against a running `npm start` network, as a client no one here wrote (the
 * openai SDK): chat and completions, streamed or not, temperatures 0–1.5, top_p, penalties, stop
 * strings, JSON mode and forced tool calls, for `--minutes`. With canaries every few seconds and
 * spot checks at rate 1 it is the trust system's test where users meet it (issue 29); it prints
 * the requests by status, then the checks the coordinator recorded (from its database).
 *
 *   GPUMESH_TRUST_CANARY_INTERVAL_MS=5000 GPUMESH_TRUST_SPOT_CHECK_RATE=1 \
 *     npm start -- --nodes 2 --data-dir /tmp/mixed
 *   node --conditions=gpumesh-source --import tsx bench/mixed-traffic.ts --data-dir /tmp/mixed --minutes 15
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import OpenAI from 'openai';

const { values } = parseArgs({
  options: {
    'data-dir': { type: 'string', default: '.gpumesh' },
    minutes: { type: 'string', default: '15' },
    concurrency: { type: 'string', default: '4' },
  },
});
const dataDir = values['data-dir']!;
const network = JSON.parse(await readFile(path.join(dataDir, 'network.json'), 'utf8')) as {
  routerUrl: string;
  apiKey: string;
  models: { chat: string };
};
const client = new OpenAI({ apiKey: network.apiKey, baseURL: `${network.routerUrl}/v1`, maxRetries: 0 });
const model = network.models.chat;
const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)]!;
const TOPICS = ['the sea', 'a bicycle', 'compound interest', 'rain in April', 'a small town', 'bread'];

/** One request of a random kind and settings; its status ('200', or the kind and the error). */
async function oneRequest(): Promise<string> {
  const sampling = {
    temperature: pick([0, 0.7, 1, 1.5]),
    max_tokens: pick([8, 16, 32, 48]),
    ...(Math.random() < 0.3 ? { top_p: 0.9 } : {}),
    ...(Math.random() < 0.2 ? { presence_penalty: 0.5, frequency_penalty: 0.3 } : {}),
    ...(Math.random() < 0.2 ? { stop: ['.', '\n\n'] } : {}),
  };
  const content = `Tell me about ${pick(TOPICS)}.`;
  const kind = pick(['chat', 'stream', 'completion', 'json', 'tool'] as const);
  try {
    if (kind === 'completion') await client.completions.create({ model, prompt: content, ...sampling });
    else if (kind === 'stream') {
      const stream = await client.chat.completions.create({
        model,
        messages: [{ role: 'user', content }],
        stream: true,
        ...sampling,
      });
      for await (const _ of stream);
    } else if (kind === 'json')
      await client.chat.completions.create({
        model,
        messages: [{ role: 'user', content: `${content} Answer in JSON.` }],
        response_format: { type: 'json_object' },
        ...sampling,
        max_tokens: 64,
      });
    else if (kind === 'tool')
      await client.chat.completions.create({
        model,
        messages: [{ role: 'user', content: `What is the weather where ${pick(TOPICS)} is?` }],
        tools: [
          {
            type: 'function',
            function: {
              name: 'get_weather',
              parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
            },
          },
        ],
        tool_choice: { type: 'function', function: { name: 'get_weather' } },
        ...sampling,
        max_tokens: 64,
      });
    else await client.chat.completions.create({ model, messages: [{ role: 'user', content }], ...sampling });
    return '200';
  } catch (error) {
    const { status, headers } = error as { status?: number; headers?: Headers };
    // The key's rate limit: wait as told, like a polite client (not counted as a failure of the network).
    const retryAfterS = Number(headers?.get?.('retry-after'));
    if (status === 429 && retryAfterS > 0) {
      await new Promise((resolve) => setTimeout(resolve, retryAfterS * 1000));
      return '429 (waited as told)';
    }
    return `${kind} ${status ?? 'no status'}: ${(error as Error).message.slice(0, 120)}`;
  }
}

const until = Date.now() + Number(values.minutes) * 60_000;
const statuses = new Map<string, number>();
const started = Date.now();
await Promise.all(
  Array.from({ length: Number(values.concurrency) }, async () => {
    while (Date.now() < until) {
      const status = await oneRequest();
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    }
  }),
);
console.log(`${((Date.now() - started) / 60_000).toFixed(1)} minutes; requests by status:`);
for (const [status, n] of statuses) console.log(`  ${n}\t${status}`);

const db = new Database(path.join(dataDir, 'gpumesh.db'), { readonly: true });
const checks = db
  .prepare(
    `SELECT source, COUNT(*) AS n, SUM(passed = 0) AS failed, MAX(evidence_e4) / 1e4 AS worst
     FROM verifications GROUP BY source`,
  )
  .all();
console.log('checks:', checks);
console.log('nodes:', db.prepare('SELECT node_id, status, passed, failed FROM node_trust').all());
