import { type Kysely, sql } from 'kysely';
import { toBigInt } from '../db/bigint.js';
import type { Database } from '../db/schema.js';
import type { Ledger } from '../ledger/ledger.js';
import { nanoToUsd } from '../ledger/money.js';
import { readRollCursor } from './node-usage-rows.js';
import { ROLL_STATE } from './roll-usage.js';

export type UsageLine = {
  requests: number;
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  /** Seconds of audio transcribed or translated (billed to the ms; not in the token counts). */
  audioSeconds: number;
  /** Characters spoken (speech; not in the token counts). */
  characters: number;
  /** USD. */
  cost: number;
  /** The same, exact, in nanousd as an integer string. */
  costNano: string;
};

export type UsageSummary = {
  from: string;
  to: string;
  totals: UsageLine;
  byModel: (UsageLine & { model: string })[];
  byKey: (UsageLine & { keyId: string | null; name: string | null })[];
  byDay: (UsageLine & { day: string })[];
  /** By model family: chat, text, embedding, vision, voice. */
  byFamily: (UsageLine & { family: string })[];
};

type Acc = {
  requests: number;
  prompt: bigint;
  completion: bigint;
  audioMs: bigint;
  chars: bigint;
  cost: bigint;
};

/** The model family a usage row's job kind ran on. */
const FAMILY_OF_KIND: Record<string, string> = {
  chat: 'chat',
  completion: 'text',
  embedding: 'embedding',
  verify: 'chat',
  vision: 'vision',
  transcription: 'voice',
  translation: 'voice',
  speech: 'voice',
};

/**
 * A user's usage between two UTC dates (inclusive): totals and breakdowns by model, key and day.
 * Sums run in integers over the user's daily rollup (usage_user_days, roll-usage.ts) and the usage
 * rows past its cursor, so the summary equals the sum of the rows without reading each of them.
 * Sees every settlement this process queued before the call.
 */
export async function summarizeUsage(
  { db, ledger }: { db: Kysely<Database>; ledger: Ledger },
  params: { userId: string; from: string; to: string },
): Promise<UsageSummary> {
  await ledger.idle();
  const cursorHint = await readRollCursor(db);
  // One statement (one snapshot): the user's days rolled up to the cursor, and the rows after it.
  // `u.id > hint` lets the planner see how few rows lie past the cursor; the cursor itself decides.
  const result = await sql<{
    day: string;
    key_id: string;
    model: string;
    kind: string;
    requests: string | number;
    prompt_tokens: string | number | bigint;
    completion_tokens: string | number | bigint;
    cost_nano: string | number | bigint;
    key_name: string | null;
  }>`
    select x.*, k.name as key_name from (
      select day, key_id, model, kind, requests, prompt_tokens, completion_tokens, cost_nano
      from usage_user_days
      where user_id = ${params.userId} and day >= ${params.from} and day <= ${params.to}
      union all
      select u.day, coalesce(u.key_id, ''), u.model, u.kind, 1, u.prompt_tokens, u.completion_tokens, u.cost_nano
      from usage_records u
      where u.id > ${cursorHint}
        and u.id > (select cursor_id from usage_roll_state where name = ${ROLL_STATE})
        and u.user_id = ${params.userId} and u.day >= ${params.from} and u.day <= ${params.to}
    ) as x left join api_keys k on k.id = x.key_id`.execute(db);
  const rows = result.rows;
  const total: Acc = empty();
  const byModel = new Map<string, Acc>();
  const byKey = new Map<string | null, Acc & { name: string | null }>();
  const byDay = new Map<string, Acc>();
  const byFamily = new Map<string, Acc>();
  for (const r of rows) {
    // Voice rows count their billed unit in prompt_tokens: ms of audio, or characters.
    const audio = r.kind === 'transcription' || r.kind === 'translation';
    const speech = r.kind === 'speech';
    const keyId = r.key_id === '' ? null : r.key_id;
    const add = (acc: Acc) => {
      acc.requests += Number(r.requests);
      if (audio) acc.audioMs += toBigInt(r.prompt_tokens);
      else if (speech) acc.chars += toBigInt(r.prompt_tokens);
      else {
        acc.prompt += toBigInt(r.prompt_tokens);
        acc.completion += toBigInt(r.completion_tokens);
      }
      acc.cost += toBigInt(r.cost_nano);
    };
    add(total);
    add(getOr(byModel, r.model, empty));
    add(getOr(byKey, keyId, () => ({ ...empty(), name: r.key_name ?? null })));
    add(getOr(byDay, r.day, empty));
    add(getOr(byFamily, FAMILY_OF_KIND[r.kind] ?? r.kind, empty));
  }
  return {
    from: params.from,
    to: params.to,
    totals: line(total),
    byModel: [...byModel]
      .map(([model, a]) => ({ model, ...line(a) }))
      .sort((a, b) => b.requests - a.requests),
    byKey: [...byKey]
      .map(([keyId, a]) => ({ keyId, name: a.name, ...line(a) }))
      .sort((a, b) => b.requests - a.requests),
    byDay: [...byDay].map(([day, a]) => ({ day, ...line(a) })).sort((a, b) => (a.day < b.day ? -1 : 1)),
    byFamily: [...byFamily]
      .map(([family, a]) => ({ family, ...line(a) }))
      .sort((a, b) => b.requests - a.requests),
  };
}

function empty(): Acc {
  return { requests: 0, prompt: 0n, completion: 0n, audioMs: 0n, chars: 0n, cost: 0n };
}

function getOr<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let v = map.get(key);
  if (v === undefined) {
    v = make();
    map.set(key, v);
  }
  return v;
}

function line(a: Acc): UsageLine {
  return {
    requests: a.requests,
    promptTokens: Number(a.prompt),
    completionTokens: Number(a.completion),
    totalTokens: Number(a.prompt + a.completion),
    audioSeconds: Number(a.audioMs) / 1000,
    characters: Number(a.chars),
    cost: nanoToUsd(a.cost),
    costNano: a.cost.toString(),
  };
}
