import { privateKeyToAccount } from 'viem/accounts';
import { describe, expect, test } from 'vitest';
import { referenceManifest } from '../conformance/reference/reference-manifest.js';
import { canonicalJson } from './canonical-json.js';
import { challengeText } from './challenge-text.js';
import { signChallenge } from './sign-challenge.js';
import { signManifest } from './sign-manifest.js';
import { signOwnerProof } from './sign-owner-proof.js';
import { verifyChallenge } from './verify-challenge.js';
import { verifyManifest } from './verify-manifest.js';
import { verifyOwnerProof } from './verify-owner-proof.js';

const node = privateKeyToAccount('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d');
const owner = privateKeyToAccount('0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a');
const challenge = {
  nonce: '0123456789abcdef0123456789abcdef',
  issuedAt: '2026-01-01T00:00:00.000Z',
  expiresAt: '2026-01-01T00:01:00.000Z',
  coordinatorId: 'coord-1',
};
const during = Date.parse('2026-01-01T00:00:30.000Z');

describe('challengeText', () => {
  test('default', () => {
    expect(challengeText(challenge, '0xABCDEF0000000000000000000000000000000001')).toBe(
      [
        'gpumesh node authentication',
        'Coordinator: coord-1',
        'Node: 0xabcdef0000000000000000000000000000000001',
        'Nonce: 0123456789abcdef0123456789abcdef',
        'Issued At: 2026-01-01T00:00:00.000Z',
        'Expiration Time: 2026-01-01T00:01:00.000Z',
      ].join('\n'),
    );
  });
});

describe('verifyChallenge', () => {
  test('default', async () => {
    const signature = await signChallenge(challenge, node);
    expect(await verifyChallenge({ challenge, nodeId: node.address, signature, now: during })).toBe(true);
  });

  test('error: another key, another nonce, expired, garbage', async () => {
    const signature = await signChallenge(challenge, owner);
    expect(await verifyChallenge({ challenge, nodeId: node.address, signature, now: during })).toBe(false);
    const good = await signChallenge(challenge, node);
    const other = { ...challenge, nonce: 'ffffffffffffffffffffffffffffffff' };
    expect(
      await verifyChallenge({ challenge: other, nodeId: node.address, signature: good, now: during }),
    ).toBe(false);
    const late = Date.parse(challenge.expiresAt) + 1;
    expect(await verifyChallenge({ challenge, nodeId: node.address, signature: good, now: late })).toBe(
      false,
    );
    const garbage = `0x${'00'.repeat(65)}`;
    expect(await verifyChallenge({ challenge, nodeId: node.address, signature: garbage, now: during })).toBe(
      false,
    );
  });
});

describe('canonicalJson', () => {
  test('default', () => {
    expect(canonicalJson({ b: [2, { d: 1, c: 'x' }], a: null, u: undefined })).toBe(
      '{"a":null,"b":[2,{"c":"x","d":1}]}',
    );
  });

  test('error: non-JSON values', () => {
    expect(() => canonicalJson({ a: 1n })).toThrow(TypeError);
    expect(() => canonicalJson(Number.NaN)).toThrow(TypeError);
  });
});

describe('verifyManifest', () => {
  test('default', async () => {
    const manifest = referenceManifest(node.address);
    const signature = await signManifest(manifest, node);
    expect(await verifyManifest(manifest, signature)).toBe(true);
    // Key order does not matter: the signature covers the canonical form.
    const reordered = Object.fromEntries(Object.entries(manifest).reverse()) as typeof manifest;
    expect(await verifyManifest(reordered, signature)).toBe(true);
  });

  test('error: tampered manifest or foreign key', async () => {
    const manifest = referenceManifest(node.address);
    const signature = await signManifest(manifest, node);
    expect(await verifyManifest({ ...manifest, scopes: ['relay'] }, signature)).toBe(false);
    expect(await verifyManifest(manifest, await signManifest(manifest, owner))).toBe(false);
  });
});

describe('verifyOwnerProof', () => {
  test('default', async () => {
    const proof = await signOwnerProof(node.address, owner);
    expect(proof.address).toBe(owner.address);
    expect(await verifyOwnerProof(node.address, proof)).toBe(true);
  });

  test('error: proof for another node or claimed by another address', async () => {
    const proof = await signOwnerProof(node.address, owner);
    expect(await verifyOwnerProof(owner.address, proof)).toBe(false);
    expect(await verifyOwnerProof(node.address, { ...proof, address: node.address })).toBe(false);
  });
});
