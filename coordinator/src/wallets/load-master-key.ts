import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { CoordinatorConfig } from '../config.js';
import { ApiError } from '../errors.js';
import { MASTER_KEY_BYTES } from './keyring.js';

export const MASTER_KEY_FILE = 'master.key';
const OWNER_ONLY = 0o600;

/**
 * The master key for secrets at rest: `config.masterKey` (hex) when set, else the key file
 * <dataDir>/master.key, created with mode 0600 on first start. Losing the file loses every
 * wallet key, so it is never overwritten.
 */
export function loadMasterKey(config: Pick<CoordinatorConfig, 'masterKey' | 'dataDir'>): Buffer {
  if (config.masterKey) return Buffer.from(config.masterKey, 'hex');
  const file = path.join(config.dataDir, MASTER_KEY_FILE);
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  try {
    // 'wx': only the first process creates it; a concurrent second one reads the winner's key.
    writeFileSync(file, randomBytes(MASTER_KEY_BYTES).toString('hex'), { flag: 'wx', mode: OWNER_ONLY });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
      throw new ApiError('invalid_config', `cannot create ${file}`, { cause: error });
    }
  }
  if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, OWNER_ONLY);
  const hex = readFileSync(file, 'utf8').trim();
  if (!/^[0-9a-fA-F]{64}$/.test(hex))
    throw new ApiError('invalid_config', `${file} is not a 32-byte hex key`);
  return Buffer.from(hex, 'hex');
}
