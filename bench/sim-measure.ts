/**
 * What bench/network-sim.ts measures a coordinator with from outside: its process's memory and CPU
 * (/proc), a user signed in over HTTP with a funded key, page latencies, and paid traffic at a
 * fixed rate (open loop: a slow answer never delays the next request).
 */

import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { Kysely } from 'kysely';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { Database } from '../coordinator/src/db/schema.js';
import { credit } from '../coordinator/src/ledger/credit.js';
import { pickRequestModel } from './sim-catalog.js';
import { readThreads } from './thread-times.js';

/** A process's resident memory (bytes) and CPU used so far by all its threads (ns). */
export function procSample(pid: number): { rss: number; cpuNs: number; at: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  let cpuNs = 0;
  for (const { run } of readThreads(pid)?.values() ?? []) cpuNs += run;
  return { rss: rssKb * 1024, cpuNs, at: performance.now() };
}

/** CPU share of one core a process used between two samples (1 = one core busy). */
export function cpuShare(
  before: { cpuNs: number; at: number },
  after: { cpuNs: number; at: number },
): number {
  return (after.cpuNs - before.cpuNs) / 1e6 / (after.at - before.at);
}

async function call(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: unknown,
): Promise<{ status: number; json: unknown }> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${text.slice(0, 200)}`);
  return { status: response.status, json: text ? JSON.parse(text) : null };
}

/** A new user signed in over HTTP (nonce, signature, verify), an `sk-` key of theirs, credited. */
export async function fundedUser(
  base: string,
  db: Kysely<Database>,
  amountNano: bigint,
): Promise<{ jwt: string; key: string }> {
  const account = privateKeyToAccount(generatePrivateKey());
  const nonce = await call(base, 'GET', `/api/auth/nonce?address=${account.address}`);
  const { message } = nonce.json as { message: string };
  const signature = await account.signMessage({ message });
  const verify = await call(
    base,
    'POST',
    '/api/auth/verify',
    {},
    { address: account.address, message, signature },
  );
  const jwt = (verify.json as { token: string }).token;
  const auth = { authorization: `Bearer ${jwt}` };
  const user = (await call(base, 'GET', '/api/user', auth)).json as { id: string };
  const key = ((await call(base, 'POST', '/api/router/keys', auth, { name: 'sim' })).json as { key: string })
    .key;
  await credit(db, { userId: user.id, amountNano, ref: `network-sim-${Date.now()}` });
  return { jwt, key };
}

/** `n` GETs of `url` one after another; latencies in ms, sorted, and the statuses seen. */
export async function sampleLatency(
  url: string,
  headers: Record<string, string>,
  n: number,
  /** A pause before each request (ms): past a page's max-age, each answer is computed afresh. */
  gapMs = 0,
): Promise<{ ms: number[]; statuses: Set<number>; bytes: number }> {
  const ms: number[] = [];
  const statuses = new Set<number>();
  let bytes = 0;
  for (let i = 0; i < n; i++) {
    if (gapMs > 0) await new Promise((resolve) => setTimeout(resolve, gapMs));
    const start = performance.now();
    const response = await fetch(url, { headers });
    bytes = (await response.arrayBuffer()).byteLength;
    ms.push(performance.now() - start);
    statuses.add(response.status);
  }
  return { ms: ms.sort((a, b) => a - b), statuses, bytes };
}

/** The p-quantile (0–1) of sorted values, nearest rank. */
export function quantile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

export type TrafficResult = {
  sent: number;
  ok: number;
  /** Answers by status (0: a transport error). */
  statuses: Record<string, number>;
  /** Latencies of the answered requests, ms, sorted. */
  ms: number[];
};

/**
 * Paid chat completions at `rate` a second for `durationS` to `base`, models as pickRequestModel
 * draws them, one in five streamed.
 */
export async function paidTraffic(options: {
  base: string;
  key: string;
  rate: number;
  durationS: number;
  models: number;
  /** Nodes in the network (the long tail served is as long as they cover). */
  nodes: number;
}): Promise<TrafficResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const target = new URL(`${options.base}/v1/chat/completions`);
  const total = Math.round(options.rate * options.durationS);
  const result: TrafficResult = { sent: 0, ok: 0, statuses: {}, ms: [] };
  let done = 0;
  let finish!: () => void;
  const finished = new Promise<void>((r) => {
    finish = r;
  });
  const record = (status: number, start: number) => {
    result.statuses[status] = (result.statuses[status] ?? 0) + 1;
    if (status === 200) {
      result.ok++;
      result.ms.push(performance.now() - start);
    }
    if (++done === total) finish();
  };
  const fire = () => {
    const stream = Math.random() < 0.2;
    const body = Buffer.from(
      JSON.stringify({
        model: pickRequestModel(Math.random, options.models, options.nodes),
        messages: [{ role: 'user', content: 'Say hello.' }],
        max_tokens: 6,
        stream,
      }),
    );
    const start = performance.now();
    const req = http.request(
      {
        agent,
        hostname: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        headers: {
          authorization: `Bearer ${options.key}`,
          'content-type': 'application/json',
          'content-length': String(body.length),
        },
      },
      (res) => {
        res.on('data', () => {});
        res.on('end', () => record(res.statusCode ?? 0, start));
      },
    );
    req.on('error', () => record(0, start));
    req.end(body);
    result.sent++;
  };
  const began = performance.now();
  while (result.sent < total) {
    const due = Math.min(total, Math.floor(((performance.now() - began) / 1000) * options.rate) + 1);
    while (result.sent < due) fire();
    await new Promise((r) => setTimeout(r, 5));
  }
  if (total > 0) await finished;
  agent.destroy();
  result.ms.sort((a, b) => a - b);
  return result;
}
