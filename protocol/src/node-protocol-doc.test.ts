import { readFileSync } from 'node:fs';
import { type Hex, keccak256, serializeSignature, toBytes } from 'viem';
import { privateKeyToAccount, sign } from 'viem/accounts';
import { describe, expect, test } from 'vitest';
import { COORDINATOR_SCENARIO_NAMES } from './conformance/coordinator/coordinator-scenarios.js';
import { NODE_SCENARIO_NAMES } from './conformance/node/node-scenarios.js';
import { PROTOCOL_ERRORS } from './errors.js';
import { challengeText } from './identity/challenge-text.js';
import { signChallenge } from './identity/sign-challenge.js';
import { signManifest } from './identity/sign-manifest.js';
import { signOwnerProof } from './identity/sign-owner-proof.js';
import { verifyChallenge } from './identity/verify-challenge.js';
import { FRAME_TYPES, SamplingSchema, VerificationResponse, VerifyRequest } from './messages.js';
import { parseFrame } from './parse-frame.js';
import { PRESENCE_TRANSITIONS } from './presence.js';
import { PENALTY_WINDOW_TOKENS } from './sampled-distribution.js';
import { SESSION_ORDER, SESSION_PHASES } from './session-order.js';
import { DEFAULT_TIER_THRESHOLDS_WEI, TIER_BENEFITS, type TierName } from './tiers.js';

/** The node test key of §3. */
const key: Hex = '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d';

/** NODE_PROTOCOL.md must say what the code does: these tests fail when either side changes alone. */
const doc = readFileSync(new URL('../NODE_PROTOCOL.md', import.meta.url), 'utf8');

function section(number: number): string {
  const start = doc.indexOf(`\n## ${number}. `);
  const end = doc.indexOf('\n## ', start + 1);
  expect(start).toBeGreaterThan(0);
  return doc.slice(start, end === -1 ? undefined : end);
}

describe('NODE_PROTOCOL.md', () => {
  test('behavior: the error table lists exactly the registry, with its close codes and retryability', () => {
    const rows = [...section(10).matchAll(/^\|\s*`([a-z_]+)`\s*\|\s*(\d{4}|—)\s*\|\s*(yes|no)\s*\|/gm)];
    const documented = Object.fromEntries(
      rows.map(([, code, close, retryable]) => [
        code,
        { closeCode: close === '—' ? null : Number(close), retryable: retryable === 'yes' },
      ]),
    );
    const registry = Object.fromEntries(
      Object.entries(PROTOCOL_ERRORS).map(([code, entry]) => [
        code,
        { closeCode: entry.closeCode, retryable: entry.retryable },
      ]),
    );
    expect(documented).toEqual(registry);
  });

  test('behavior: every frame type has an example, and every example validates', () => {
    const blocks = [...doc.matchAll(/```json\n([\s\S]*?)```/g)].map(([, body]) => body!);
    const types = new Set<string>();
    for (const body of blocks) {
      const frame = parseFrame(JSON.stringify(JSON.parse(body)));
      types.add(frame.type);
    }
    expect([...types].sort()).toEqual([...FRAME_TYPES].sort());
  });

  test('behavior: the phase table lists exactly what each side accepts in each phase', () => {
    const rows = [...section(4).matchAll(/^\|\s*`([a-z]+)`\s*\|[^|]*\|([^|]*)\|([^|]*)\|/gm)];
    const names = (cell: string) => [...cell.matchAll(/`([a-z_]+)`/g)].map(([, name]) => name);
    expect(rows.map(([, phase]) => phase)).toEqual([...SESSION_PHASES]);
    for (const [, phase, coordinator, node] of rows) {
      const p = phase as (typeof SESSION_PHASES)[number];
      expect(names(coordinator!)).toEqual(SESSION_ORDER.coordinator[p]);
      expect(names(node!)).toEqual(SESSION_ORDER.node[p]);
    }
  });

  test('behavior: the presence table lists exactly the allowed transitions', () => {
    const rows = [...section(8).matchAll(/^\| `([a-z]+)`\s*\| `([a-z]+)`\s*\| `([a-z]+)`\s*\|/gm)];
    const documented = rows.map(([, from, event, to]) => `${from} --${event}--> ${to}`).sort();
    const code = Object.entries(PRESENCE_TRANSITIONS)
      .flatMap(([from, moves]) => Object.entries(moves).map(([event, to]) => `${from} --${event}--> ${to}`))
      .sort();
    expect(documented).toEqual(code);
  });

  test('behavior: the tier table matches the default ladder', () => {
    const rows = [
      ...section(7).matchAll(/^\| `([a-z]+)`\s*\| ([\d ]+?)\s*\|[^|]*\| (\d+)\s*\| (\d+)\s*\|/gm),
    ];
    expect(rows.map(([, tier]) => tier)).toEqual(Object.keys(TIER_BENEFITS));
    for (const [, tier, stake, concurrency, priority] of rows) {
      const name = tier as TierName;
      const threshold = name === 'none' ? 0n : DEFAULT_TIER_THRESHOLDS_WEI[name];
      expect(BigInt(stake!.replaceAll(' ', '')) * 10n ** 18n).toBe(threshold);
      expect(Number(concurrency)).toBe(TIER_BENEFITS[name].maxConcurrency);
      expect(Number(priority)).toBe(TIER_BENEFITS[name].routingPriority);
    }
  });

  test('behavior: the verify tables list exactly the request’s members, sampling’s and the answer’s v0.2 fields; the penalty window is the code’s (§9)', () => {
    // The first column of each table in §9, table by table.
    const tables: string[][] = [];
    let inTable = false;
    for (const line of section(9).split('\n')) {
      if (!line.startsWith('|')) inTable = false;
      else if (!inTable) {
        inTable = true;
        tables.push([]);
      }
      const name = /^\| `([A-Za-z0-9_]+)`[ ,]/.exec(line)?.[1];
      if (inTable && name) tables.at(-1)!.push(name);
    }
    const table = (first: string) => tables.find((names) => names[0] === first);
    expect(table('promptTokenIds')).toEqual(Object.keys(VerifyRequest.properties));
    expect(table('temperature')).toEqual(Object.keys(SamplingSchema.properties));
    const v1 = ['object', 'model', 'logprobs', 'in_top_k', 'usage'];
    expect(table('sampled_logprobs')?.sort()).toEqual(
      Object.keys(VerificationResponse.properties)
        .filter((field) => !v1.includes(field))
        .sort(),
    );
    expect(section(9)).toContain(`the last ${PENALTY_WINDOW_TOKENS} completion tokens before`);
  });

  test('behavior: the conformance section names exactly the kit’s scenarios', () => {
    const names = (label: string) => {
      const line = section(13).split(`${label} scenarios: `)[1]!.split('.')[0]!;
      return [...line.matchAll(/`([a-z_]+)`/g)].map(([, name]) => name);
    };
    expect(names('Node')).toEqual(NODE_SCENARIO_NAMES);
    expect(names('Coordinator')).toEqual(COORDINATOR_SCENARIO_NAMES);
  });

  test('behavior: the printed test keys reproduce the example signatures; a high-s form verifies too (§3)', async () => {
    const keys = [...section(3).matchAll(/^\| [a-z ]+\| `(0x[0-9a-fA-F]{40})` \| `(0x[0-9a-f]{64})` \|/gm)];
    expect(keys).toHaveLength(2);
    for (const [, address, key] of keys) {
      expect(privateKeyToAccount(key as Hex).address).toBe(address);
    }
    const json = (type: string) =>
      [...doc.matchAll(/```json\n([\s\S]*?)```/g)]
        .map(([, body]) => JSON.parse(body!))
        .find((frame) => frame.type === type);
    const [hello, challenge, auth] = [json('hello'), json('challenge'), json('auth')];
    const node = privateKeyToAccount(keys[0]![2] as Hex);
    const owner = privateKeyToAccount(keys[1]![2] as Hex);
    expect(node.address).toBe(hello.nodeId);
    expect(await signChallenge(challenge, node)).toBe(auth.signature);
    expect(await signOwnerProof(node.address, owner)).toEqual(auth.owner);
    const manifestFrame = json('manifest');
    expect(await signManifest(manifestFrame.manifest, node)).toBe(manifestFrame.signature);

    // s → n − s and v flipped: the same signer recovers.
    const n = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
    const sig = auth.signature as string;
    const s = BigInt(`0x${sig.slice(66, 130)}`);
    const v = Number.parseInt(sig.slice(130), 16) === 27 ? '1c' : '1b';
    const high = `${sig.slice(0, 66)}${(n - s).toString(16).padStart(64, '0')}${v}`;
    const now = Date.parse(challenge.issuedAt);
    expect(await verifyChallenge({ challenge, nodeId: hello.nodeId, signature: high, now })).toBe(true);
  });

  test('behavior: the doc links the frame schemas and the path coordinators serve them on (§2)', () => {
    expect(section(2)).toContain('[`schema/frames.schema.json`](schema/frames.schema.json)');
    expect(section(2)).toContain('`GET /schema/v0/frames.schema.json`');
  });

  test('behavior: the EIP-191 length is in UTF-8 bytes, not characters (§3)', async () => {
    const node = privateKeyToAccount(key);
    const challenge = {
      nonce: 'ab'.repeat(16),
      issuedAt: '2026-01-01T00:00:00.000Z',
      expiresAt: '2026-01-01T00:01:00.000Z',
      coordinatorId: 'coördinator-ü', // two characters of two bytes each
    };
    const text = challengeText(challenge, node.address);
    const digest = (length: number) => keccak256(toBytes(`\x19Ethereum Signed Message:\n${length}${text}`));
    const verify = (signature: string) =>
      verifyChallenge({ challenge, nodeId: node.address, signature, now: Date.parse(challenge.issuedAt) });
    const bytes = serializeSignature(await sign({ hash: digest(toBytes(text).length), privateKey: key }));
    const chars = serializeSignature(await sign({ hash: digest(text.length), privateKey: key }));
    expect(toBytes(text).length).toBe(text.length + 2);
    expect(await verify(bytes)).toBe(true);
    expect(await verify(chars)).toBe(false);
  });
});
