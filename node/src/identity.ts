import { randomUUID } from 'node:crypto';
import { chmod, link, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';
import { NodeError } from './errors.js';

/** The node's identity: a secp256k1 key whose address is the node id. */
export type NodeIdentity = {
  /** The node id: the key's checksummed address. */
  nodeId: `0x${string}`;
  /** Signs challenges and manifests (EIP-191). The private key never leaves this object. */
  account: PrivateKeyAccount;
  /** True when this call created the key file. */
  created: boolean;
};

const KEY_FILE_MODE = 0o600;
const PRIVATE_KEY_PATTERN = /^0x[0-9a-fA-F]{64}$/;

/**
 * Loads the node key from `path`, creating it (mode 0600, parent folders 0700) on first start.
 * The key is written whole to a private temporary file and then hard-linked into place, which fails
 * if the file exists: two processes starting at once cannot both publish a key, and the loser never
 * reads a half-written one. A key file readable by others is tightened back to 0600.
 */
export async function loadNodeIdentity(path: string): Promise<NodeIdentity> {
  let created = false;
  const draft = `${path}.${process.pid}.${randomUUID()}.tmp`;
  try {
    await mkdir(dirname(path), { recursive: true, mode: 0o700 });
    await writeFile(draft, `${generatePrivateKey()}\n`, { mode: KEY_FILE_MODE, flag: 'wx' });
    await link(draft, path);
    created = true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
      throw new NodeError('identity_invalid', { detail: `Cannot create ${path}.`, cause: error });
    }
  } finally {
    await rm(draft, { force: true });
  }
  const key = (await readFile(path, 'utf8')).trim();
  if (!PRIVATE_KEY_PATTERN.test(key)) {
    throw new NodeError('identity_invalid', { detail: `${path} does not hold a 32-byte hex private key.` });
  }
  if (((await stat(path)).mode & 0o077) !== 0) await chmod(path, KEY_FILE_MODE);
  const account = privateKeyToAccount(key as `0x${string}`);
  return { nodeId: account.address, account, created };
}
