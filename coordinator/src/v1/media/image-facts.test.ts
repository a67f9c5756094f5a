import { describe, expect, test } from 'vitest';
import { imageFacts } from './image-facts.js';

describe('imageFacts', () => {
  test('default: PNG, GIF, JPEG and WebP sizes from their headers', () => {
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAIAAAADCAIAAAA2iEnW', 'base64');
    expect(imageFacts(png)).toEqual({ mimeType: 'image/png', width: 2, height: 3 });
    const gif = Buffer.from('GIF89a\x05\x00\x07\x00', 'latin1');
    expect(imageFacts(gif)).toEqual({ mimeType: 'image/gif', width: 5, height: 7 });
    // SOI, an APP0 segment, then SOF0 with height 480 and width 640.
    const jpeg = Buffer.from([
      0xff, 0xd8, 0xff, 0xe0, 0x00, 0x04, 0x00, 0x00, 0xff, 0xc0, 0x00, 0x11, 0x08, 0x01, 0xe0, 0x02, 0x80,
      0x03,
    ]);
    expect(imageFacts(jpeg)).toEqual({ mimeType: 'image/jpeg', width: 640, height: 480 });
    const webp = Buffer.alloc(30);
    webp.write('RIFF', 0);
    webp.write('WEBPVP8X', 8);
    webp.writeUIntLE(99, 24, 3);
    webp.writeUIntLE(49, 27, 3);
    expect(imageFacts(webp)).toEqual({ mimeType: 'image/webp', width: 100, height: 50 });
  });

  test('error: anything else, or a zero size, is not an image', () => {
    expect(imageFacts(Buffer.from('hello world, this is not an image'))).toBeUndefined();
    expect(imageFacts(Buffer.from('GIF89a\x00\x00\x07\x00', 'latin1'))).toBeUndefined();
    expect(imageFacts(Buffer.from([0xff, 0xd8, 0x00]))).toBeUndefined();
  });
});
