import { getAddress } from 'viem';
import type { WalletLock } from './wallet-lock.js';

/**
 * Serializes work per signing address, so two transactions of one wallet never race for a nonce,
 * nor two check-then-sends for a balance. In one process the queue alone does it; with replicas it
 * also holds the wallet's shared lock (wallet-lock.ts) for each task, the in-process queue staying
 * the fast path so a replica's own tasks do not poll the database against each other.
 */
export type SignerQueue = {
  /** Runs `task` after every earlier task of `address` has settled; resolves with its result. */
  run<T>(address: string, task: () => Promise<T>): Promise<T>;
};

/** Creates an empty per-wallet signer queue; with `lock`, each task also holds the shared lock. */
export function createSignerQueue({ lock }: { lock?: WalletLock } = {}): SignerQueue {
  const tails = new Map<string, Promise<unknown>>();
  return {
    run<T>(address: string, work: () => Promise<T>): Promise<T> {
      const key = getAddress(address);
      const task = lock ? () => lock.hold(key, work) : work;
      const previous = tails.get(key) ?? Promise.resolve();
      const result = previous.then(task, task);
      const tail = result.catch(() => {});
      tails.set(key, tail);
      // Forget the wallet once its queue drains, so the map does not grow with every user ever seen.
      void tail.then(() => {
        if (tails.get(key) === tail) tails.delete(key);
      });
      return result;
    },
  };
}
