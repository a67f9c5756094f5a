/**
 * A uniform [0, 1) source from 16 bytes of seed material (sfc32: 128 bits of state, non-linear, so
 * its output does not give its seed away the way a 32-bit generator's would to a brute force).
 * Canaries use one per recurring text (traffic-shapes.ts `sharedRandom`), seeded from a secret.
 */
export function seededRandom(seed: Uint8Array): () => number {
  if (seed.length < 16) throw new RangeError('seededRandom needs 16 bytes of seed');
  const view = new DataView(seed.buffer, seed.byteOffset, 16);
  let a = view.getUint32(0);
  let b = view.getUint32(4);
  let c = view.getUint32(8);
  let d = view.getUint32(12);
  const next = (): number => {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  // Warm up: the first outputs of sfc32 still show its seed's structure.
  for (let i = 0; i < 12; i++) next();
  return next;
}

/** One of `items`, uniformly, by `random`. */
export const pick = <T>(items: readonly T[], random: () => number): T =>
  items[Math.floor(random() * items.length)]!;
