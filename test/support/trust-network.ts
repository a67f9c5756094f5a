/**
 * The network of test/trust.test.ts: a coordinator on SQLite beside a devnet, and three real
 * gpumesh-node daemons on node-llama-cpp (CPU) holding two generated models of the same shape,
 * different seeds and a sharper output layer (outputStd 0.5): an honest node serving model A, a liar
 * serving B's weights under A's hash (it edited its hash cache, the way a real cheat would), and a
 * `network` node (silver tier) holding A that verifies. The coordinator's own verifier of A gives the
 * second opinion. The liar's owner stakes 100 TOK for real; the platform's fee income pays canaries.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { writeTinyModel } from '@gpumesh/node';
import { type SpawnedNodeDaemon, spawnNodeDaemon } from '@gpumesh/node/testing';
import { signOwnerProof } from '@gpumesh/protocol';
import type { FastifyInstance } from 'fastify';
import { parseEther } from 'viem';
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';
import { expect } from 'vitest';
import { buildApp } from '../../coordinator/src/app.js';
import { stakingPoolArtifact } from '../../coordinator/src/chain/staking-pool-artifact.js';
import { loadConfig } from '../../coordinator/src/config.js';
import { ENTRY_KINDS, PLATFORM_ACCOUNT_ID } from '../../coordinator/src/db/tables/ledger.js';
import { applyEntry } from '../../coordinator/src/ledger/apply-entry.js';
import {
  expectBooksBalanced,
  signIn,
  type TestDatabase,
  testBackends,
  until,
} from '../../coordinator/src/testing/index.js';
import { startLocalVerifier } from '../../coordinator/src/trust/checks/local-verifier.js';
import { chainOverrides, type Devnet, proxyAddressOf, startDevnet } from '../chain-fixture.js';
import { USD } from './expected-charge.js';
import { nodeIdOf } from './tiny-node-network.js';

const sqlite = testBackends().find((b) => b.name === 'sqlite')!;
/** Model A's id in the test catalog. */
export const MODEL = 'test/model-a';

type Canaries = FastifyInstance['canaries'];

export type TrustNetwork = {
  /** The folder of the models, node homes and the catalog. */
  dir: string;
  db: TestDatabase;
  app: FastifyInstance;
  base: string;
  devnet: Devnet;
  /** The daemons in start order: honest, liar, verifier, then any a test adds. */
  daemons: SpawnedNodeDaemon[];
  ids: { honest: string; liar: string; verifier: string };
  verifierOwner: PrivateKeyAccount;
  liarOwner: PrivateKeyAccount;
  liarJwt: string;
  /** The staking pool's balance and rewards pool right after the liar's owner staked. */
  poolAfterStake: { balance: bigint; rewardsPool: bigint };
  /** The staking pool's rewards pool now. */
  rewardsPool(): Promise<bigint>;
  balance(address: `0x${string}`): Promise<bigint>;
  /** Model A's file and sha256. */
  modelA: string;
  shaOfA: string;
  /** A node folder: its models dir holds `file` (A or B) as model.gguf. */
  nodeDir(name: string, file: string): string;
  /** A liar's node folder: `file`'s weights, with a hash cache that says they are model A. */
  claimingA(name: string, file: string, sha256: string): string;
  nodeIdOf(home: string): Promise<string>;
  /** A node's checkable model and its first verifier (a network node before the coordinator's own). */
  pairFor(nodeId: string):
    | {
        target: ReturnType<Canaries['targets']>[number];
        verifier: ReturnType<Canaries['verifiersFor']>[number];
      }
    | undefined;
  close(): Promise<void>;
};

/**
 * Starts the network; resolves once the honest node and the liar are both paired with the network
 * verifier. `close()` stops everything (the books must balance); a failed start closes what it began.
 */
export async function startTrustNetwork(): Promise<TrustNetwork> {
  const dir = mkdtempSync(path.join(tmpdir(), 'gpumesh-trust-'));
  let db: TestDatabase;
  let app: FastifyInstance;
  const daemons: SpawnedNodeDaemon[] = [];
  const verifierOwner = privateKeyToAccount(generatePrivateKey());
  const liarOwner = privateKeyToAccount(generatePrivateKey());
  let devnet: Devnet;
  let poolAfterStake = { balance: 0n, rewardsPool: 0n };
  let liarJwt = '';
  const balance = (address: `0x${string}`) => devnet.context.client.getBalance({ address });
  const rewardsPool = () =>
    devnet.context.client.readContract({
      address: devnet.stakingPool,
      abi: stakingPoolArtifact.abi,
      functionName: 'rewardsPool',
    });
  let ids: { honest: string; liar: string; verifier: string };
  let modelA = '';
  let shaOfA = '';
  let base = '';
  /** The coordinator's own verifier of A: the second opinion on a network verifier's failures. */
  let confirmer: Awaited<ReturnType<typeof startLocalVerifier>> | undefined;

  /** A node folder: its models dir holds `file` (A or B) as model.gguf. */
  function nodeDir(name: string, file: string) {
    const home = path.join(dir, name);
    mkdirSync(path.join(home, 'models'), { recursive: true });
    mkdirSync(path.join(home, 'state'), { recursive: true });
    writeFileSync(path.join(home, 'models', 'model.gguf'), readFileSync(file));
    return home;
  }

  /** A liar's node folder: `file`'s weights, with a hash cache that says they are model A. */
  function claimingA(name: string, file: string, sha256: string) {
    const home = nodeDir(name, file);
    const model = path.join(home, 'models', 'model.gguf');
    const info = statSync(model);
    writeFileSync(
      path.join(home, 'state', 'model-hashes.json'),
      JSON.stringify({ [model]: { size: info.size, mtimeMs: Math.round(info.mtimeMs), sha256 } }),
    );
    return home;
  }

  /** A node's checkable model and its first verifier (a network node before the coordinator's own). */
  const pairFor = (nodeId: string) => {
    const target = app.canaries.targets().find((t) => t.node.nodeId === nodeId);
    const verifier = target && app.canaries.verifiersFor(target)[0];
    return target && verifier ? { target, verifier } : undefined;
  };

  const close = async () => {
    for (const d of daemons) await d.stop().catch(() => {});
    if (app) {
      await expectBooksBalanced(app.ctx);
      await app.close();
    }
    await confirmer?.close();
    await db?.close();
    await devnet?.stop();
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    const a = path.join(dir, 'a.gguf');
    const b = path.join(dir, 'b.gguf');
    await writeTinyModel({ path: a, seed: 101, outputStd: 0.5 });
    await writeTinyModel({ path: b, seed: 202, outputStd: 0.5 });
    const shaA = createHash('sha256').update(readFileSync(a)).digest('hex');
    const catalogFile = path.join(dir, 'catalog.json');
    writeFileSync(
      catalogFile,
      JSON.stringify({
        models: [
          {
            id: MODEL,
            name: 'test model A',
            family: 'chat',
            contextLength: 2048,
            files: [{ quant: 'F32', file: 'model.gguf', sizeBytes: statSync(a).size, sha256: shaA }],
            priceBand: { inputPerMTok: ['0', '1000000000'], outputPerMTok: ['0', '2000000000'] },
          },
        ],
      }),
    );
    const homes = {
      honest: nodeDir('honest', a),
      // The liar's lie: its hash cache says its file (B's weights) is A.
      liar: claimingA('liar', b, shaA),
      verifier: nodeDir('verifier', a),
    };
    modelA = a;
    shaOfA = shaA;
    ids = {
      honest: await nodeIdOf(homes.honest),
      liar: await nodeIdOf(homes.liar),
      verifier: await nodeIdOf(homes.verifier),
    };

    // The pool's cap at the 15 % a suspension here slashes (trust.slashBps below).
    devnet = await startDevnet({ stakingPool: { slashBps: 1_500 } });
    db = await sqlite.open('trust');
    const config = loadConfig({
      overrides: {
        ...chainOverrides(devnet, { staking: { releaseIntervalMs: 100 } }),
        dataDir: db.dataDir,
        logLevel: 'silent',
        catalogFile,
        rateLimit: { enabled: false },
        // Canaries are run by the test, one at a time.
        trust: {
          canaryIntervalMs: 0,
          spotCheckRate: 0,
          secondOpinionRate: 0,
          passesToTrust: 3,
          probationShare: 0.2,
          slashBps: 1_500,
        },
      },
    });
    const owner = verifierOwner.address.toLowerCase();
    app = await buildApp({
      config,
      store: db.store,
      logger: false,
      tierOf: async (o) => (o.toLowerCase() === owner ? 'silver' : 'none'),
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    const confirmerModels = path.join(dir, 'confirmer-models');
    mkdirSync(confirmerModels, { recursive: true });
    writeFileSync(path.join(confirmerModels, 'a.gguf'), readFileSync(a));
    confirmer = await startLocalVerifier({
      modelsDir: confirmerModels,
      stateDir: path.join(dir, 'confirmer-state'),
    });
    app.canaries.setLocalVerifier(confirmer);
    // The platform's fee income pays canaries (seeded here as an operator's adjustment).
    await applyEntry(db.db, {
      accountId: PLATFORM_ACCOUNT_ID,
      kind: ENTRY_KINDS.adjustment,
      amount: USD,
      ref: 'trust-seed',
      now: Date.now(),
    });
    // The liar's owner stakes 100 TOK in the staking pool.
    liarJwt = await signIn(app, liarOwner);
    await devnet.fund(await proxyAddressOf(app, liarJwt), { nativeWei: parseEther('101') });
    const staked = await app.inject({
      method: 'POST',
      url: '/tx',
      headers: { authorization: `Bearer ${liarJwt}` },
      payload: { method: 'chain_stake', params: [liarOwner.address, '100.0000 TOK'] },
    });
    expect(staked.statusCode).toBe(200);
    poolAfterStake = { balance: await balance(devnet.stakingPool), rewardsPool: await rewardsPool() };
    const proof = await signOwnerProof(ids.verifier, verifierOwner);
    const liarProof = await signOwnerProof(ids.liar, liarOwner);
    for (const [name, home] of Object.entries(homes)) {
      const owned = (p: typeof proof) => ['--owner-address', p.address, '--owner-signature', p.signature];
      const args =
        name === 'verifier'
          ? ['--role', 'network', ...owned(proof)]
          : name === 'liar'
            ? ['--role', 'cpu', ...owned(liarProof)]
            : ['--role', 'cpu'];
      daemons.push(spawnNodeDaemon({ coordinator: base, dir: home, args }));
    }
    // Both targets, verified by the network node (the coordinator's own verifier is the second
    // opinion; it also verifies the network node, which no other node can).
    await until(
      () =>
        [ids.honest, ids.liar].every((id) => {
          const verifier = pairFor(id)?.verifier;
          return verifier !== undefined && 'node' in verifier && verifier.node.nodeId === ids.verifier;
        }),
      90_000,
    );
  } catch (error) {
    await close();
    throw error;
  }

  return {
    dir,
    db,
    app,
    base,
    devnet,
    daemons,
    ids,
    verifierOwner,
    liarOwner,
    liarJwt,
    poolAfterStake,
    rewardsPool,
    balance,
    modelA,
    shaOfA,
    nodeDir,
    claimingA,
    nodeIdOf,
    pairFor,
    close,
  };
}
