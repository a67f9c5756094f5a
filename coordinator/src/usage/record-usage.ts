import { randomUUID } from 'node:crypto';
import { sql, type Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import type { SettleOutcome } from '../ledger/settle.js';
import type { UsageStatus } from './tables.js';

export type RecordUsageParams = {
  requestId: string;
  userId: string;
  keyId: string | null;
  model: string;
  nodeId: string;
  kind: string;
  promptTokens: number;
  completionTokens: number;
  outcome: SettleOutcome;
  status: UsageStatus;
  now: number;
};

/**
 * Inside the settlement transaction: writes the usage row and adds the charge to the API key's
 * spend, so usage, key spend and the ledger can never disagree.
 */
export async function recordUsage(trx: Transaction<Database>, p: RecordUsageParams): Promise<void> {
  await trx
    .insertInto('usage_records')
    .values({
      id: randomUUID(),
      request_id: p.requestId,
      user_id: p.userId,
      key_id: p.keyId,
      model: p.model,
      node_id: p.nodeId,
      kind: p.kind,
      prompt_tokens: p.promptTokens,
      completion_tokens: p.completionTokens,
      cost_nano: p.outcome.chargedNano,
      provider_nano: p.outcome.providerNano,
      fee_nano: p.outcome.feeNano,
      status: p.status,
      created_at: p.now,
      day: new Date(p.now).toISOString().slice(0, 10),
    })
    .execute();
  if (p.keyId) {
    await trx
      .updateTable('api_keys')
      .set({ spend_nano: sql`spend_nano + ${p.outcome.chargedNano}`, last_used_at: p.now })
      .where('id', '=', p.keyId)
      .execute();
  }
}
