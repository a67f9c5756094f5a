import { randomInt } from 'node:crypto';
import { bytesToHex, hexToBytes, ripemd160, stringToBytes } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';

export const NATIVE_ACCOUNT_NAME_LENGTH = 12;
const NAME_ALPHABET = 'abcdefghijklmnopqrstuvwxyz12345';
const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

export type NativeAccount = {
  /** 12 characters of a–z and 1–5. */
  name: string;
  /** `PUB_K1_` + base58(compressed secp256k1 key ‖ ripemd160(key ‖ "K1")[0..4]). */
  publicKey: string;
  /** 0x-prefixed secp256k1 private key; store only encrypted. */
  privateKey: `0x${string}`;
};

/** Generates a native-chain account: a random name and a fresh K1 key pair. */
export function generateNativeAccount(): NativeAccount {
  let name = '';
  for (let i = 0; i < NATIVE_ACCOUNT_NAME_LENGTH; i++) name += NAME_ALPHABET[randomInt(NAME_ALPHABET.length)];
  const privateKey = generatePrivateKey();
  return { name, publicKey: toK1PublicKey(privateKeyToAccount(privateKey).publicKey), privateKey };
}

/** Formats an uncompressed (0x04…) secp256k1 public key in the native chain's PUB_K1_ form. */
export function toK1PublicKey(uncompressed: `0x${string}`): string {
  const bytes = hexToBytes(uncompressed);
  if (bytes.length !== 65 || bytes[0] !== 4) throw new TypeError('expected an uncompressed public key');
  const compressed = new Uint8Array(33);
  compressed[0] = (bytes[64]! & 1) === 0 ? 2 : 3;
  compressed.set(bytes.subarray(1, 33), 1);
  const checksum = hexToBytes(ripemd160(new Uint8Array([...compressed, ...stringToBytes('K1')]))).subarray(
    0,
    4,
  );
  return `PUB_K1_${base58(new Uint8Array([...compressed, ...checksum]))}`;
}

function base58(bytes: Uint8Array): string {
  let n = BigInt(bytesToHex(bytes));
  let out = '';
  while (n > 0n) {
    out = BASE58[Number(n % 58n)] + out;
    n /= 58n;
  }
  for (const b of bytes) {
    if (b !== 0) break;
    out = `1${out}`;
  }
  return out;
}
