import type { ColumnType } from 'kysely';

type Int = ColumnType<string | number | bigint, number, number>;

/** One verified completion: who generated it, who verified it, what the statistic said. */
export interface VerificationsTable {
  id: string;
  node_id: string;
  verifier_id: string;
  model: string;
  sha256: string;
  job_id: string;
  verify_job_id: string;
  tokens: Int;
  mean_logprob_e4: Int;
  top_k_e4: Int;
  /** 1 or 0. */
  passed: Int;
  /** canary | spot (a live completion) */
  source: ColumnType<string, string | undefined, string>;
  /** ln of the check's e-value × 10,000 (> 0 counts against the node). */
  evidence_e4: ColumnType<string | number | bigint, number | undefined, number>;
  /** Why the check failed outright (claims that don't hold together), if it did. */
  failure: ColumnType<string | null, string | null | undefined, string | null>;
  /** JSON {quant: ln q/p × 10,000} for each cheaper quantization scored (migration 027); null: none. */
  substitution_e4: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Int;
}

/** A node's standing from its verifications (lowercase node id). */
export interface NodeTrustTable {
  node_id: string;
  passed: Int;
  failed: Int;
  status: TrustStatus;
  reason: string | null;
  /** The node's running evidence (CUSUM of its checks' ln e-values) × 10,000. */
  evidence_e4: ColumnType<string | number | bigint, number | undefined, number>;
  /** When the running evidence last rose from 0: the window a conviction refunds. */
  window_start: ColumnType<string | number | bigint | null, number | null | undefined, number | null>;
  /** JSON {quant: running evidence × 10,000}: one CUSUM per cheaper quantization (migration 027). */
  substitution_e4: ColumnType<string | null, string | null | undefined, string | null>;
  updated_at: Int;
}

export const TRUST_STATUS = { probation: 'probation', trusted: 'trusted', suspended: 'suspended' } as const;
export type TrustStatus = (typeof TRUST_STATUS)[keyof typeof TRUST_STATUS];

/**
 * A slash of the stake of a suspended node's owner, ordered by trust/ and carried out by staking/
 * (slash.ts): the stake drops and the tokens move from the staking vault to the rewards vault.
 */
export interface SlashesTable {
  id: string;
  node_id: string;
  owner: string;
  fraction_bps: Int;
  evidence: string;
  status: SlashStatus;
  amount_wei: string | null;
  stake_event_id: string | null;
  tx_hash: string | null;
  raw_tx: string | null;
  /** sha256 of `evidence` (0x…), the evidenceHash of its Slashed event (null before migration 023). */
  evidence_hash: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Int;
  updated_at: Int;
}

export const SLASH_STATUS = {
  pending: 'pending',
  signing: 'signing',
  signed: 'signed',
  sent: 'sent',
  none: 'none',
} as const;
export type SlashStatus = (typeof SLASH_STATUS)[keyof typeof SLASH_STATUS];

/** One conviction or reinstatement of a node: who, why, and what it moved (trust/slashing/convict.ts, reinstate.ts). */
export interface TrustAuditTable {
  id: string;
  /** Lowercase. */
  node_id: string;
  action: TrustAction;
  /** `coordinator` (a verification verdict) or `operator` (the reinstate command). */
  actor: string;
  reason: string;
  /** JSON. */
  details: string;
  created_at: Int;
}

export const TRUST_ACTION = { convict: 'convict', reinstate: 'reinstate' } as const;
export type TrustAction = (typeof TRUST_ACTION)[keyof typeof TRUST_ACTION];

export interface TrustTables {
  verifications: VerificationsTable;
  node_trust: NodeTrustTable;
  slashes: SlashesTable;
  trust_audit: TrustAuditTable;
}
