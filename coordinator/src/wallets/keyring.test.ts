import { randomBytes } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { ApiError } from '../errors.js';
import { createKeyring } from './keyring.js';

describe('createKeyring', () => {
  const keyring = createKeyring(randomBytes(32));

  test('default', () => {
    const sealed = keyring.encrypt('0xsecret', 'ctx');
    expect(sealed).not.toContain('secret');
    expect(keyring.decrypt(sealed, 'ctx')).toBe('0xsecret');
    expect(keyring.encrypt('0xsecret', 'ctx')).not.toBe(sealed);
  });

  test('error: other context', () => {
    expect(() => keyring.decrypt(keyring.encrypt('x', 'a'), 'b')).toThrow(ApiError);
  });

  test('error: other master key', () => {
    const sealed = createKeyring(randomBytes(32)).encrypt('x', 'a');
    expect(() => keyring.decrypt(sealed, 'a')).toThrow(ApiError);
  });

  test('error: tampered', () => {
    const sealed = keyring.encrypt('hello', 'a');
    const parts = sealed.split('.');
    parts[3] = Buffer.from('jello').toString('base64url');
    expect(() => keyring.decrypt(parts.join('.'), 'a')).toThrow(ApiError);
    expect(() => keyring.decrypt('garbage', 'a')).toThrow(ApiError);
  });

  test('error: wrong key size', () => {
    expect(() => createKeyring(randomBytes(16))).toThrow(TypeError);
  });
});
