import { type Hex, sha256, toBytes } from 'viem';

/** Where the coordinator serves a conviction's evidence JSON, by its hash (evidence-routes.ts). */
export const EVIDENCE_PATH = '/api/evidence';

/**
 * The hash a slash's evidence is known by — the `evidenceHash` of its Slashed event in the staking
 * pool: sha256 of the evidence JSON's UTF-8 bytes, exactly as stored and served (lowercase 0x-hex).
 */
export function evidenceHashOf(evidence: string): Hex {
  return sha256(toBytes(evidence));
}

/** The public path of a slash's evidence. */
export function evidencePath(hash: string): string {
  return `${EVIDENCE_PATH}/${hash}`;
}
