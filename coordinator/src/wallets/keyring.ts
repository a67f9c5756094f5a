import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { ApiError } from '../errors.js';

export const MASTER_KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const FORMAT = 'v1';

/** Encrypts and decrypts secrets at rest under the master key (AES-256-GCM). */
export type Keyring = {
  /**
   * Encrypts `plaintext`. `context` (e.g. `wallet:proxy:<userId>`) is bound as additional data, so
   * a ciphertext copied to another row does not decrypt there.
   */
  encrypt(plaintext: string, context: string): string;
  /** Decrypts; throws ApiError('internal_error') on a wrong key, context or tampered text. */
  decrypt(ciphertext: string, context: string): string;
};

/** Builds a keyring over a 32-byte master key. */
export function createKeyring(masterKey: Uint8Array): Keyring {
  if (masterKey.length !== MASTER_KEY_BYTES) throw new TypeError('master key must be 32 bytes');
  const key = Buffer.from(masterKey);
  return Object.freeze({
    encrypt(plaintext: string, context: string): string {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(Buffer.from(context, 'utf8'));
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      const tag = cipher.getAuthTag();
      return [FORMAT, iv.toString('base64url'), tag.toString('base64url'), body.toString('base64url')].join(
        '.',
      );
    },
    decrypt(ciphertext: string, context: string): string {
      const [format, iv, tag, body] = ciphertext.split('.');
      if (format !== FORMAT || !iv || !tag || body === undefined) {
        throw new ApiError('internal_error', undefined, { cause: new Error('unknown ciphertext format') });
      }
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'), {
          authTagLength: TAG_BYTES,
        });
        decipher.setAAD(Buffer.from(context, 'utf8'));
        decipher.setAuthTag(Buffer.from(tag, 'base64url'));
        return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString(
          'utf8',
        );
      } catch (error) {
        throw new ApiError('internal_error', undefined, { cause: error });
      }
    },
  });
}
