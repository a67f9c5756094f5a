import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { ProtocolError } from './errors.js';
import { canonicalJson } from './identity/canonical-json.js';
import { challengeText } from './identity/challenge-text.js';
import { ownerProofText } from './identity/owner-proof-text.js';
import { verifyChallenge } from './identity/verify-challenge.js';
import { verifyManifest } from './identity/verify-manifest.js';
import { verifyOwnerProof } from './identity/verify-owner-proof.js';
import { FRAME_TYPES } from './messages.js';
import { parseFrame } from './parse-frame.js';

const vectors = new URL('../vectors/', import.meta.url);
const read = (path: string) => JSON.parse(readFileSync(new URL(path, vectors), 'utf8'));
const list = (dir: string) => readdirSync(new URL(dir, vectors)).filter((name) => name.endsWith('.json'));

type InvalidVector = {
  description: string;
  error: string;
  frame?: unknown;
  text?: string;
  base64?: string;
  maxBytes?: number;
};

describe('vectors/valid', () => {
  test('behavior: one per frame type', () => {
    expect(
      list('valid/')
        .map((name) => name.replace(/\.json$/, ''))
        .sort(),
    ).toEqual([...FRAME_TYPES].sort());
  });

  for (const name of list('valid/')) {
    test(name, () => {
      const { frame } = read(`valid/${name}`);
      expect(parseFrame(JSON.stringify(frame))).toEqual(frame);
    });
  }
});

describe('vectors/invalid', () => {
  for (const name of list('invalid/')) {
    test(name, () => {
      const vector = read(`invalid/${name}`) as InvalidVector;
      const data =
        vector.base64 !== undefined
          ? Buffer.from(vector.base64, 'base64')
          : (vector.text ?? JSON.stringify(vector.frame));
      let thrown: unknown;
      try {
        parseFrame(data, vector.maxBytes === undefined ? {} : { maxBytes: vector.maxBytes });
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(ProtocolError);
      expect((thrown as ProtocolError).code).toBe(vector.error);
    });
  }
});

describe('vectors/identity', () => {
  test('challenge', async () => {
    const { nodeId, challenge, text, signature } = read('identity/challenge.json');
    expect(challengeText(challenge, nodeId)).toBe(text);
    const now = Date.parse(challenge.issuedAt);
    expect(await verifyChallenge({ challenge, nodeId, signature, now })).toBe(true);
  });

  test('manifest', async () => {
    const { manifest, canonical, signature } = read('identity/manifest.json');
    expect(canonicalJson(manifest)).toBe(canonical);
    expect(await verifyManifest(manifest, signature)).toBe(true);
  });

  test('owner', async () => {
    const { nodeId, owner, text, signature } = read('identity/owner.json');
    expect(ownerProofText(nodeId)).toBe(text);
    expect(await verifyOwnerProof(nodeId, { address: owner, signature })).toBe(true);
  });
});
