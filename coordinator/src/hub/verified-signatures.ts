import { createHash } from 'node:crypto';

/** Verified signatures a hub remembers (~100 bytes each): a few per node, for far more nodes than connect. */
export const DEFAULT_VERIFIED_SIGNATURES_MAX = 100_000;

/**
 * Signatures the hub already found valid — a manifest's, an owner proof's — so a node that
 * reconnects with the same signed manifest and proof costs one signature recovery (its challenge,
 * which is new every session) instead of three (~4 ms each here). Whether a signature signs a
 * text never changes, so remembering a success is safe; a failure is not remembered. The oldest
 * are forgotten first beyond `max`.
 */
export class VerifiedSignatures {
  readonly #max: number;
  readonly #known = new Set<string>();

  constructor(max = DEFAULT_VERIFIED_SIGNATURES_MAX) {
    this.#max = max;
  }

  /** `check()` unless this text and signature were verified before; remembers a success. */
  async verify(text: string, signature: string, check: () => Promise<boolean>): Promise<boolean> {
    const key = createHash('sha256').update(text).update('\n').update(signature).digest('base64');
    if (this.#known.has(key)) return true;
    if (!(await check())) return false;
    this.#known.add(key);
    if (this.#known.size > this.#max) this.#known.delete(this.#known.values().next().value!);
    return true;
  }

  get size(): number {
    return this.#known.size;
  }
}
