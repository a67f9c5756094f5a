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
  created_at: Int;
}

/** A node's standing from its verifications (lowercase node id). */
export interface NodeTrustTable {
  node_id: string;
  passed: Int;
  failed: Int;
  status: TrustStatus;
  reason: string | null;
  updated_at: Int;
}

export const TRUST_STATUS = { probation: 'probation', trusted: 'trusted', suspended: 'suspended' } as const;
export type TrustStatus = (typeof TRUST_STATUS)[keyof typeof TRUST_STATUS];

export interface TrustTables {
  verifications: VerificationsTable;
  node_trust: NodeTrustTable;
}
