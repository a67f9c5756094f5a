/** The response schemas of the node figures the provider and network routes answer (provider-routes.ts). */
import { Type } from '@sinclair/typebox';

export const Usd = Type.Number({ description: 'USD' });
export const TrustSummary = Type.Object({
  status: Type.String({ description: 'probation | trusted | suspended' }),
  reputation: Type.Integer({ description: '0…100' }),
  lastCheckAt: Type.Union([Type.String(), Type.Null()]),
  passed: Type.Integer(),
  failed: Type.Integer(),
  lastFailure: Type.Union([
    Type.Object({ at: Type.String({ description: 'ISO 8601' }), reason: Type.String() }),
    Type.Null(),
  ]),
});
export const NodeFigures = Type.Object({
  nodeId: Type.String(),
  linkedAt: Type.String({ description: 'ISO 8601' }),
  live: Type.Boolean(),
  state: Type.Union([Type.String(), Type.Null()]),
  tierRank: Type.Union([Type.Integer(), Type.Null()]),
  models: Type.Array(
    Type.Object({
      id: Type.String(),
      family: Type.String(),
      pricePerMTok: Type.Object({ input: Type.String(), output: Type.String(), currency: Type.String() }),
    }),
  ),
  jobs: Type.Integer(),
  failedJobs: Type.Integer(),
  tokens: Type.Object({ prompt: Type.Integer(), completion: Type.Integer() }),
  earnings: Type.Object({ today: Usd, last7Days: Usd, total: Usd }),
  uptime: Type.Object({
    last24h: Type.Number({ description: '0…1, connected to the network' }),
    last7Days: Type.Number(),
  }),
  /** Over its completed jobs of the last 7 days; null with none. */
  medians: Type.Object({
    ttftMs: Type.Union([Type.Integer(), Type.Null()]),
    tokensPerSecond: Type.Union([Type.Number(), Type.Null()]),
  }),
  trust: TrustSummary,
  /** Its latest verifications (canaries and spot checks), newest first. */
  verifications: Type.Array(
    Type.Object({
      at: Type.String(),
      source: Type.String({ description: 'canary | spot' }),
      model: Type.String(),
      jobId: Type.String(),
      verifier: Type.String(),
      tokens: Type.Integer(),
      meanLogprob: Type.Number(),
      topKFraction: Type.Number(),
      passed: Type.Boolean(),
    }),
  ),
  /** Slashes of the owner's stake for this node, with the evidence. */
  slashes: Type.Array(
    Type.Object({
      at: Type.String(),
      status: Type.String(),
      fractionBps: Type.Integer(),
      amount: Type.Union([Type.String({ description: 'native token' }), Type.Null()]),
      txHash: Type.Union([Type.String(), Type.Null()]),
      evidence: Type.Any(),
      evidenceHash: Type.Union([
        Type.String({ description: "sha256: the Slashed event's evidenceHash" }),
        Type.Null(),
      ]),
      evidenceUrl: Type.Union([Type.String(), Type.Null()]),
    }),
  ),
});
