import type { FastifyInstance } from 'fastify';
import { type Hex, parseEventLogs, sha256, toBytes } from 'viem';
import { expect } from 'vitest';
import { stakingPoolArtifact } from '../../coordinator/src/chain/staking-pool-artifact.js';
import type { Devnet } from '../chain-fixture.js';

/**
 * A slash, checked as an outsider would: its transaction's Slashed event in the staking pool names
 * the sha256 of the evidence JSON, and the coordinator serves exactly that JSON under that hash.
 */
export async function expectSlashEvidence(
  app: FastifyInstance,
  devnet: Devnet,
  slash: { tx_hash: string | null; evidence: string },
): Promise<void> {
  const receipt = await devnet.context.client.getTransactionReceipt({ hash: slash.tx_hash as Hex });
  const [slashed] = parseEventLogs({
    abi: stakingPoolArtifact.abi,
    eventName: 'Slashed',
    logs: receipt.logs,
  });
  expect(slashed!.args.evidenceHash).toBe(sha256(toBytes(slash.evidence)));
  const served = await app.inject({ url: `/api/evidence/${slashed!.args.evidenceHash}` });
  expect({ status: served.statusCode, body: served.body }).toEqual({ status: 200, body: slash.evidence });
}
