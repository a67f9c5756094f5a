import { describe, expect, test } from 'vitest';
import { API_KEY_PATTERN, generateApiKey, hashApiKey } from './generate-api-key.js';

describe('generateApiKey', () => {
  test('default', () => {
    const key = generateApiKey();
    expect(key.secret).toMatch(/^sk-[0-9A-Za-z]{40}$/);
    expect(key.secret).toMatch(API_KEY_PATTERN);
    expect(key.prefix).toBe(key.secret.slice(0, 9));
    expect(key.hash).toBe(hashApiKey(key.secret));
    expect(key.hash).not.toContain(key.secret.slice(3));
    expect(generateApiKey().secret).not.toBe(key.secret);
  });
});
