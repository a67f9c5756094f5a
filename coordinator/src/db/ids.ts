import { randomUUID } from 'node:crypto';

/**
 * A time-ordered UUID (version 7: 48 bits of milliseconds, then random bits). Rows written in
 * time order land at the end of their B-tree indexes instead of on random pages, which keeps the
 * write-ahead log and the checkpoints of a busy ledger small. Unique like a random UUID (74 random
 * bits), and still opaque to clients. The random part comes from randomUUID, whose entropy Node
 * draws in bulk (a fresh randomBytes call per id costs a system call).
 */
export function newId(now: number = Date.now()): string {
  const time = now.toString(16).padStart(12, '0').slice(-12);
  const random = randomUUID();
  // xxxxxxxx-xxxx-4xxx-Nxxx-xxxxxxxxxxxx: keep the variant (N) and the random tail.
  return `${time.slice(0, 8)}-${time.slice(8)}-7${random.slice(15, 18)}-${random.slice(19)}`;
}
