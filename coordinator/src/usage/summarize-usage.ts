import type { Kysely } from 'kysely';
import { toBigInt } from '../db/bigint.js';
import type { Database } from '../db/schema.js';
import type { Ledger } from '../ledger/ledger.js';
import { nanoToUsd } from '../ledger/money.js';

export type UsageLine = {
  requests: number;
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
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
};

type Acc = { requests: number; prompt: bigint; completion: bigint; cost: bigint };

/**
 * A user's usage between two UTC dates (inclusive): totals and breakdowns by model, key and day.
 * Sums run in integers over the usage rows themselves, so the summary equals the sum of the rows.
 * Sees every settlement this process queued before the call.
 */
export async function summarizeUsage(
  { db, ledger }: { db: Kysely<Database>; ledger: Ledger },
  params: { userId: string; from: string; to: string },
): Promise<UsageSummary> {
  await ledger.idle();
  const rows = await db
    .selectFrom('usage_records')
    .leftJoin('api_keys', 'api_keys.id', 'usage_records.key_id')
    .select([
      'usage_records.model',
      'usage_records.key_id',
      'api_keys.name as key_name',
      'usage_records.day',
      'usage_records.prompt_tokens',
      'usage_records.completion_tokens',
      'usage_records.cost_nano',
    ])
    .where('usage_records.user_id', '=', params.userId)
    .where('usage_records.day', '>=', params.from)
    .where('usage_records.day', '<=', params.to)
    .execute();
  const total: Acc = empty();
  const byModel = new Map<string, Acc>();
  const byKey = new Map<string | null, Acc & { name: string | null }>();
  const byDay = new Map<string, Acc>();
  for (const r of rows) {
    const add = (acc: Acc) => {
      acc.requests++;
      acc.prompt += toBigInt(r.prompt_tokens);
      acc.completion += toBigInt(r.completion_tokens);
      acc.cost += toBigInt(r.cost_nano);
    };
    add(total);
    add(getOr(byModel, r.model, empty));
    add(getOr(byKey, r.key_id, () => ({ ...empty(), name: r.key_name ?? null })));
    add(getOr(byDay, r.day, empty));
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
  };
}

function empty(): Acc {
  return { requests: 0, prompt: 0n, completion: 0n, cost: 0n };
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
    cost: nanoToUsd(a.cost),
    costNano: a.cost.toString(),
  };
}
