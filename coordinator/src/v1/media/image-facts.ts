/** An image's type and size, read from its header. */
export type ImageFacts = {
  mimeType: 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp';
  width: number;
  height: number;
};

/**
 * The type, width and height of a PNG, JPEG, GIF or WebP image, from its first bytes; undefined
 * for anything else (or a header too broken to read). The coordinator bounds a vision job's image
 * tokens by these (NODE_PROTOCOL.md §9 "Units and prices").
 */
export function imageFacts(b: Buffer): ImageFacts | undefined {
  if (b.length >= 24 && b.readUInt32BE(0) === 0x89504e47 && b.toString('ascii', 12, 16) === 'IHDR')
    return sized('image/png', b.readUInt32BE(16), b.readUInt32BE(20));
  if (b.length >= 10 && (b.toString('ascii', 0, 6) === 'GIF87a' || b.toString('ascii', 0, 6) === 'GIF89a'))
    return sized('image/gif', b.readUInt16LE(6), b.readUInt16LE(8));
  if (b.length >= 30 && b.toString('ascii', 0, 4) === 'RIFF' && b.toString('ascii', 8, 12) === 'WEBP') {
    const chunk = b.toString('ascii', 12, 16);
    if (chunk === 'VP8 ')
      return sized('image/webp', b.readUInt16LE(26) & 0x3fff, b.readUInt16LE(28) & 0x3fff);
    if (chunk === 'VP8L') {
      const bits = b.readUInt32LE(21);
      return sized('image/webp', (bits & 0x3fff) + 1, ((bits >> 14) & 0x3fff) + 1);
    }
    if (chunk === 'VP8X') return sized('image/webp', b.readUIntLE(24, 3) + 1, b.readUIntLE(27, 3) + 1);
    return undefined;
  }
  if (b.length >= 4 && b[0] === 0xff && b[1] === 0xd8) {
    for (let at = 2; at + 9 < b.length; ) {
      if (b[at] !== 0xff) return undefined;
      const marker = b[at + 1]!;
      if (marker === 0xff) {
        at++;
        continue;
      }
      const length = b.readUInt16BE(at + 2);
      // Start-of-frame markers (baseline, progressive …), not DHT (C4), JPG (C8) or DAC (CC).
      if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc)
        return sized('image/jpeg', b.readUInt16BE(at + 7), b.readUInt16BE(at + 5));
      at += 2 + length;
    }
  }
  return undefined;
}

function sized(mimeType: ImageFacts['mimeType'], width: number, height: number): ImageFacts | undefined {
  return width > 0 && height > 0 ? { mimeType, width, height } : undefined;
}
