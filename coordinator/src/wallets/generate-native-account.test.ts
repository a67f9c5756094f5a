import { describe, expect, test } from 'vitest';
import { generateNativeAccount, toK1PublicKey } from './generate-native-account.js';

describe('generateNativeAccount', () => {
  test('default', () => {
    const a = generateNativeAccount();
    expect(a.name).toMatch(/^[a-z1-5]{12}$/);
    expect(a.publicKey).toMatch(/^PUB_K1_[1-9A-HJ-NP-Za-km-z]{50,53}$/);
    expect(a.privateKey).toMatch(/^0x[0-9a-f]{64}$/);
    expect(generateNativeAccount().name).not.toBe(a.name);
  });

  test('behavior: known vector', async () => {
    // The native chain's well-known development key: WIF 5KQwrPbw…FD3 ↔ EOS6MRyAjQq…GDW5CV, whose
    // K1 form (ripemd160 checksum over key ‖ "K1") is the string below.
    const { privateKeyToAccount } = await import('viem/accounts');
    const account = privateKeyToAccount('0xd2653ff7cbb2d8ff129ac27ef5781ce68b2558c41a74af1f2ddca635cbeef07d');
    expect(toK1PublicKey(account.publicKey)).toBe(
      'PUB_K1_6MRyAjQq8ud7hVNYcfnVPJqcVpscN5So8BhtHuGYqET5BoDq63',
    );
  });
});
