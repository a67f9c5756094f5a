import { describe, expect, test } from 'vitest';
import { buildSignInMessage, parseSignInNonce } from './sign-in-message.js';

describe('buildSignInMessage', () => {
  test('default', () => {
    const message = buildSignInMessage({
      domain: 'gpumesh.test',
      address: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8',
      uri: 'https://gpumesh.test',
      chainId: 800000,
      nonce: 'abc123XYZ789abcd',
      issuedAtMs: 0,
      expiresAtMs: 600_000,
    });
    expect(message).toMatchInlineSnapshot(`
      "Sign this message to authenticate with gpumesh.

      Domain: gpumesh.test
      Address: 0x70997970C51812dc3A010C7d01b50e0d17dc79C8
      URI: https://gpumesh.test
      Chain ID: 800000
      Nonce: abc123XYZ789abcd
      Issued At: 1970-01-01T00:00:00.000Z
      Expiration Time: 1970-01-01T00:10:00.000Z"
    `);
    expect(parseSignInNonce(message)).toBe('abc123XYZ789abcd');
  });

  test('behavior: no nonce line', () => {
    expect(parseSignInNonce('hello')).toBeNull();
    expect(parseSignInNonce('Nonce: short')).toBeNull();
  });
});
