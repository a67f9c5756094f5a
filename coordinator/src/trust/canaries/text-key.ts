/**
 * Keys of texts: a 53-bit hash (cyrb53) seeded with a secret of the process. Equal texts get equal
 * keys, which is all traffic-shapes.ts needs to mirror repetition; the secret keeps anyone holding
 * keys from testing a guessed text against them. Not a MAC — keys never leave the process — but
 * cheap enough for the request path (a pass over the characters, no allocation).
 */

/** A keyer: text → key, seeded with two 32-bit words of a secret. */
export function textKeyer(seed1: number, seed2: number): (text: string) => number {
  return (text) => {
    let h1 = 0xdeadbeef ^ seed1;
    let h2 = 0x41c6ce57 ^ seed2;
    for (let i = 0; i < text.length; i++) {
      const ch = text.charCodeAt(i);
      h1 = Math.imul(h1 ^ ch, 2654435761);
      h2 = Math.imul(h2 ^ ch, 1597334677);
    }
    h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507);
    h1 ^= Math.imul(h2 ^ (h2 >>> 13), 3266489909);
    h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507);
    h2 ^= Math.imul(h1 ^ (h1 >>> 13), 3266489909);
    return 4294967296 * (2097151 & h2) + (h1 >>> 0);
  };
}
