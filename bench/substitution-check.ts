/**
 * One check as the coordinator makes it (trust/canary-runner.ts `runOnce` and `check`,
 * score-completion.ts), on the node daemon's own runtime: the job runs on the weights a node really
 * serves, its claims (usage, token ids, the text the client got) are prechecked, its ids are
 * teacher-forced by a `verify` job on the claimed weights under the job's own sampling settings,
 * and judged (trust/judge.ts) — the same code, without the network and the ledger around it.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { createRuntime, loadConfig } from '@gpumesh/node';
import { deliveredText, streamedText } from '../coordinator/src/router/delivered-text.js';
import type { JobTokenIds } from '../coordinator/src/router/jobs.js';
import type { Canary } from '../coordinator/src/trust/canaries/make-canary.js';
import {
  type Claims,
  failedCheck,
  type Judgement,
  judge,
  precheck,
} from '../coordinator/src/trust/checks/judge.js';
import { samplingOf } from '../coordinator/src/trust/checks/sampling-of.js';
import { logRatio } from '../coordinator/src/trust/checks/substitution-ratio.js';
import type { Runtime } from '../node/src/runtimes/runtime.js';

/** The coordinator's default `trust.topK` (config-schema.ts). */
const TOP_K = 8;

export type CheckResult =
  | {
      status: 'verified';
      judgement: Judgement;
      tokens: number;
      /** ln q/p of the completion for each cheaper quantization (substitution-evidence.ts); [] unscored. */
      ratios: number[];
    }
  | { status: 'empty' }
  | { status: 'skipped'; reason: string };

export type Bench = {
  /** The runtime's model id for a file's sha256. */
  idOf(sha256: string): string;
  /**
   * `canary` served by the weights `served`, claimed as `claimed` (sha256s), and checked; the
   * proposed check also teacher-forces the ids on each of `cheaper` (the claim's cheaper quantizations).
   */
  check(canary: Canary, served: string, claimed: string, cheaper: readonly string[]): Promise<CheckResult>;
  close(): Promise<void>;
};

/** The daemon's runtime over the GGUF files of `modelsDir`, loaded (CPU, one thread: the machine is shared). */
export async function loadCpuRuntime(modelsDir: string, stateDir: string) {
  mkdirSync(stateDir, { recursive: true });
  const config = loadConfig({
    flags: {
      'models-dir': path.resolve(modelsDir),
      'state-dir': path.resolve(stateDir),
      gpu: 'cpu',
      threads: '1',
      'max-concurrency': '1',
    },
    env: {},
  });
  const { runtime } = await createRuntime(config);
  await runtime.load();
  return runtime;
}

/** A daemon runtime over the GGUF files of `modelsDir` (CPU, one thread: the machine is shared). */
export async function startBench(modelsDir: string, stateDir: string): Promise<Bench> {
  const runtime = await loadCpuRuntime(modelsDir, stateDir);
  const bySha = new Map<string, string>();
  for (const m of runtime.models()) if (m.sha256) bySha.set(m.sha256, m.id);
  const idOf = (sha256: string) => {
    const id = bySha.get(sha256);
    if (!id) throw new Error(`no model in ${modelsDir} has sha256 ${sha256}`);
    return id;
  };
  return {
    idOf,
    check: (canary, served, claimed, cheaper) =>
      checkOnce(
        runtime,
        canary,
        { served: idOf(served), claimed: idOf(claimed), claimedSha: claimed },
        cheaper.map((sha) => ({ id: idOf(sha), sha })),
      ),
    close: () => runtime.close(),
  };
}

async function checkOnce(
  runtime: Runtime,
  canary: Canary,
  { served, claimed, claimedSha }: { served: string; claimed: string; claimedSha: string },
  cheaper: readonly { id: string; sha: string }[],
): Promise<CheckResult> {
  const chunks: Record<string, unknown>[] = [];
  let tokenIds: JobTokenIds | undefined;
  let response: Awaited<ReturnType<Runtime['run']>>;
  try {
    response = await runtime.run({
      kind: canary.kind,
      model: served,
      request: { ...canary.request, model: served },
      stream: canary.stream,
      onChunk: (chunk) => {
        chunks.push(chunk);
      },
      onTokenIds: (ids) => {
        tokenIds = ids;
      },
    });
  } catch (error) {
    return { status: 'skipped', reason: `generation failed: ${(error as Error).message}` };
  }
  const claims: Claims = {
    kind: canary.kind,
    request: canary.request,
    usage: response.usage,
    tokenIds,
    delivered: canary.stream && chunks.length > 0 ? streamedText(chunks) : deliveredText(response),
  };
  const n = tokenIds?.completion.length ?? 0;
  if (claims.usage.completion_tokens === 0 && n === 0) return { status: 'empty' };
  const broken = precheck(claims);
  if (broken) return failed(broken, n, cheaper.length);
  const request = {
    promptTokenIds: tokenIds!.prompt,
    completionTokenIds: tokenIds!.completion,
    topK: TOP_K,
    sampling: samplingOf(canary.request),
    sha256: claimedSha,
  };
  let verified: Record<string, unknown>;
  try {
    verified = await runtime.run({ kind: 'verify', model: claimed, request, stream: false });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'invalid_request' || code === 'context_length_exceeded') {
      return failed(`can't be evaluated: ${code}`, n, cheaper.length);
    }
    return { status: 'skipped', reason: `verify failed: ${(error as Error).message}` };
  }
  const judgement = judge(verified, claims);
  if (!judgement) return { status: 'skipped', reason: 'the verifier answered out of protocol' };
  if (!judgement.scored) return { status: 'verified', judgement, tokens: n, ratios: [] };
  const ratios: number[] = [];
  for (const other of cheaper) {
    const q = await runtime.run({
      kind: 'verify',
      model: other.id,
      request: { ...request, sha256: other.sha },
      stream: false,
    });
    ratios.push(
      logRatio(verified.sampled_logprobs as (number | null)[], q.sampled_logprobs as (number | null)[]),
    );
  }
  return { status: 'verified', judgement, tokens: n, ratios };
}

function failed(reason: string, n: number, statistics: number): CheckResult {
  const judgement = failedCheck(reason, n);
  // A check failed outright counts the cap in every statistic.
  return {
    status: 'verified',
    judgement,
    tokens: n,
    ratios: new Array<number>(statistics).fill(judgement.logE),
  };
}
