import { describe, expect, test } from 'vitest';
import { VerifiedSignatures } from './verified-signatures.js';

describe('VerifiedSignatures', () => {
  test('default: a signature verified once is not checked again', async () => {
    const verified = new VerifiedSignatures();
    let checks = 0;
    const check = async () => {
      checks++;
      return true;
    };
    expect(await verified.verify('text', '0xsig', check)).toBe(true);
    expect(await verified.verify('text', '0xsig', check)).toBe(true);
    expect(checks).toBe(1);
    // Another text or another signature is checked.
    expect(await verified.verify('text 2', '0xsig', check)).toBe(true);
    expect(await verified.verify('text', '0xsig2', check)).toBe(true);
    expect(checks).toBe(3);
  });

  test('behavior: a failure is not remembered', async () => {
    const verified = new VerifiedSignatures();
    let checks = 0;
    const check = async () => {
      checks++;
      return false;
    };
    expect(await verified.verify('text', '0xbad', check)).toBe(false);
    expect(await verified.verify('text', '0xbad', check)).toBe(false);
    expect(checks).toBe(2);
    expect(verified.size).toBe(0);
  });

  test('behavior: the oldest are forgotten beyond max', async () => {
    const verified = new VerifiedSignatures(2);
    let checks = 0;
    const check = async () => {
      checks++;
      return true;
    };
    for (const text of ['a', 'b', 'c']) await verified.verify(text, '0x', check);
    expect(verified.size).toBe(2);
    await verified.verify('a', '0x', check);
    expect(checks).toBe(4);
  });
});
