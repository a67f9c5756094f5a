import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { ApiError } from '../../errors.js';
import { parseMultipart } from './parse-multipart.js';

const TYPE = 'multipart/form-data; boundary=XyZ';
const body = (...parts: string[]) =>
  Buffer.from(`${parts.map((p) => `--XyZ\r\n${p}\r\n`).join('')}--XyZ--\r\n`);

describe('parseMultipart', () => {
  test('default: fields and a file, bytes intact', () => {
    const parts = parseMultipart(
      body(
        'Content-Disposition: form-data; name="model"\r\n\r\nwhisper',
        'Content-Disposition: form-data; name="file"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\nRIFF\r\n--Xy',
      ),
      TYPE,
    );
    expect(parts).toEqual([
      { name: 'model', data: Buffer.from('whisper') },
      { name: 'file', filename: 'a.wav', contentType: 'audio/wav', data: Buffer.from('RIFF\r\n--Xy') },
    ]);
  });

  test('error: no boundary, no closing delimiter, a part without a name', () => {
    expect(() => parseMultipart(Buffer.from('x'), 'multipart/form-data')).toThrow(ApiError);
    expect(() =>
      parseMultipart(Buffer.from('--XyZ\r\nContent-Disposition: form-data; name="a"\r\n\r\nb'), TYPE),
    ).toThrow(ApiError);
    expect(() => parseMultipart(body('Content-Disposition: form-data\r\n\r\nx'), TYPE)).toThrow(ApiError);
  });

  test('property: any bytes either parse or throw an invalid_request ApiError, never anything else', () => {
    const pieces = fc.constantFrom(
      '--XyZ',
      '--XyZ--',
      '\r\n',
      '\r\n\r\n',
      'Content-Disposition: form-data; name="f"',
      '; filename="x"',
      'a',
    );
    fc.assert(
      fc.property(
        fc.oneof(
          fc.uint8Array({ maxLength: 200 }).map(Buffer.from),
          fc.array(pieces, { maxLength: 20 }).map((p) => Buffer.from(p.join(''))),
        ),
        (bytes) => {
          try {
            parseMultipart(bytes, TYPE);
          } catch (error) {
            expect(error).toBeInstanceOf(ApiError);
            expect((error as ApiError).code).toBe('invalid_request');
          }
        },
      ),
      { numRuns: 2_000 },
    );
  });
});
