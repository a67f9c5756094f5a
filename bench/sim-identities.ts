/**
 * The simulated network's identities (bench/network-sim.ts): per node a key, its address, its
 * signed manifest and its owner's proof — everything a node signs once (NODE_PROTOCOL.md §3), so
 * a session costs the simulator one signature (the challenge's) and reconnects reuse the rest.
 * Keys are derived from a seed, so a run is repeatable; what was signed is cached in the temp
 * folder, so only the first run of a size pays for ~3 signatures and an address per node.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  canonicalJson,
  type Manifest,
  type ModelOffer,
  ownerProofText,
  PROTOCOL_VERSION,
} from '@gpumesh/protocol';
import { type Hex, keccak256, toHex } from 'viem';
import { privateKeyToAddress, signMessage } from 'viem/accounts';
import { simModelOf, simSha256 } from './sim-catalog.js';

export type SimIdentity = {
  key: Hex;
  address: Hex;
  manifest: Manifest;
  signature: Hex;
  owner: { address: Hex; signature: Hex };
};

/** Nodes per owner wallet: an owner runs a few machines. */
export const NODES_PER_OWNER = 10;
/** A fixed issue time: the manifest never changes, so one signature serves every session. */
const ISSUED_AT = '2026-11-28T00:00:00.000Z';
const USD = 1_000_000_000n;

/** The private key of simulated node or owner `i` of this seed (not a secret: a bench key). */
export function simKey(seed: string, kind: 'node' | 'owner', i: number): Hex {
  return keccak256(toHex(`gpumesh-network-sim:${seed}:${kind}:${i}`));
}

/** Two offers per node: one of the popular models and one of the long tail (sim-catalog.ts). */
export function simOffers(i: number, models: number): ModelOffer[] {
  return simModelOf(i, models).map((m, k) => ({
    id: `sim-${m}`,
    family: 'chat',
    contextLength: 4096,
    maxConcurrency: 8,
    sha256: simSha256(m),
    price: {
      currency: 'USD',
      // Prices spread over the nodes, so the pick has an order to keep.
      inputPerMTok: String((BigInt(10 + ((i * 7 + k) % 90)) * USD) / 100n),
      outputPerMTok: String((BigInt(20 + ((i * 13 + k) % 90)) * USD) / 100n),
    },
  }));
}

function makeIdentity(seed: string, i: number, models: number): SimIdentity {
  const key = simKey(seed, 'node', i);
  const address = privateKeyToAddress(key);
  const ownerKey = simKey(seed, 'owner', Math.floor(i / NODES_PER_OWNER));
  const manifest: Manifest = {
    nodeId: address,
    role: 'gpu',
    hardware: {
      gpus: [],
      cpu: { model: 'sim', cores: 8, threads: 16, arch: 'x64' },
      ramBytes: 32 * 1024 ** 3,
    },
    runtimes: [{ name: 'sim', version: '0.0.0' }],
    models: simOffers(i, models),
    scopes: ['infer.chat', 'infer.text'],
    owner: privateKeyToAddress(ownerKey),
    software: { name: 'gpumesh-network-sim', version: '0.0.0' },
    protocolVersion: PROTOCOL_VERSION,
    issuedAt: ISSUED_AT,
  };
  return {
    key,
    address,
    manifest,
    signature: '0x',
    owner: { address: manifest.owner as Hex, signature: '0x' },
  };
}

async function sign(identity: SimIdentity, seed: string, i: number): Promise<SimIdentity> {
  const ownerKey = simKey(seed, 'owner', Math.floor(i / NODES_PER_OWNER));
  identity.signature = await signMessage({
    message: canonicalJson(identity.manifest),
    privateKey: identity.key,
  });
  identity.owner.signature = await signMessage({
    message: ownerProofText(identity.address),
    privateKey: ownerKey,
  });
  return identity;
}

/**
 * Identities of nodes 0…n-1 for this seed and model count, from the cache as far as it goes (the
 * cache grows to the largest n asked);
 * `onProgress` is told every 1,000 made.
 */
export async function simIdentities(
  seed: string,
  n: number,
  models: number,
  onProgress: (made: number) => void = () => {},
): Promise<SimIdentity[]> {
  const file = path.join(tmpdir(), `gpumesh-network-sim-${seed}-${models}.json`);
  const out = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as SimIdentity[]) : [];
  if (out.length >= n) return out.slice(0, n);
  for (let i = out.length; i < n; i++) {
    out.push(await sign(makeIdentity(seed, i, models), seed, i));
    if ((i + 1) % 1000 === 0) {
      onProgress(i + 1);
      // Let the process breathe (its parent reads our output meanwhile).
      await new Promise((r) => setImmediate(r));
    }
  }
  writeFileSync(file, JSON.stringify(out));
  return out;
}
