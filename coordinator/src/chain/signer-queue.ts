import { getAddress } from 'viem';

/**
 * Serializes work per signing address, so two transactions of one wallet never race for a nonce.
 * One queue per process is the unit of safety; callers share one through the chain context.
 */
export type SignerQueue = {
  /** Runs `task` after every earlier task of `address` has settled; resolves with its result. */
  run<T>(address: string, task: () => Promise<T>): Promise<T>;
};

/** Creates an empty per-wallet signer queue. */
export function createSignerQueue(): SignerQueue {
  const tails = new Map<string, Promise<unknown>>();
  return {
    run<T>(address: string, task: () => Promise<T>): Promise<T> {
      const key = getAddress(address);
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
