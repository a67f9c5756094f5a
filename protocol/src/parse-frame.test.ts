import { describe, expect, test } from 'vitest';
import { createFrame } from './create-frame.js';
import { encodeFrame } from './encode-frame.js';
import { ProtocolError, type ProtocolErrorCode } from './errors.js';
import { parseFrame } from './parse-frame.js';

function codeOf(run: () => unknown): ProtocolErrorCode | undefined {
  try {
    run();
  } catch (error) {
    if (error instanceof ProtocolError) return error.code;
    throw error;
  }
  return undefined;
}

describe('parseFrame', () => {
  test('default', () => {
    const frame = parseFrame('{"v":0,"type":"ping","ts":5}');
    expect(frame).toEqual({ v: 0, type: 'ping', ts: 5 });
  });

  test('behavior: accepts Buffer, ArrayBuffer and fragment lists', () => {
    const text = encodeFrame(createFrame('pong', { ts: 7 }));
    const buffer = Buffer.from(text);
    expect(parseFrame(buffer).type).toBe('pong');
    expect(parseFrame(new Uint8Array(buffer).buffer).type).toBe('pong');
    expect(parseFrame([buffer.subarray(0, 3), buffer.subarray(3)]).type).toBe('pong');
  });

  test('behavior: unknown fields are ignored', () => {
    expect(parseFrame('{"v":0,"type":"ping","ts":5,"future":true}').type).toBe('ping');
  });

  test('error: each check produces its code and close code', () => {
    expect(codeOf(() => parseFrame('{"v":0,"type":"ping","ts":5}', { maxBytes: 10 }))).toBe(
      'frame_too_large',
    );
    expect(codeOf(() => parseFrame('{"v":0,'))).toBe('malformed_frame');
    expect(codeOf(() => parseFrame('[1]'))).toBe('malformed_frame');
    expect(codeOf(() => parseFrame('null'))).toBe('malformed_frame');
    expect(codeOf(() => parseFrame(Buffer.from([0x7b, 0xff, 0x7d])))).toBe('malformed_frame');
    expect(codeOf(() => parseFrame('{"v":0,"type":"ping","ts":5}', { binary: true }))).toBe(
      'malformed_frame',
    );
    expect(codeOf(() => parseFrame('{"v":0,"type":"nope"}'))).toBe('unknown_type');
    expect(codeOf(() => parseFrame('{"v":0}'))).toBe('unknown_type');
    expect(codeOf(() => parseFrame('{"v":0,"type":"toString"}'))).toBe('unknown_type');
    expect(codeOf(() => parseFrame('{"v":1,"type":"ping","ts":5}'))).toBe('unsupported_version');
    expect(codeOf(() => parseFrame('{"v":"0","type":"ping","ts":5}'))).toBe('schema_violation');
    expect(codeOf(() => parseFrame('{"v":0,"type":"ping","ts":-1}'))).toBe('schema_violation');
    try {
      parseFrame('{"v":0,"type":"ping"}');
    } catch (error) {
      expect(error).toBeInstanceOf(ProtocolError);
      expect((error as ProtocolError).closeCode).toBe(4002);
      expect((error as ProtocolError).message).toContain('/ts');
    }
  });
});

describe('encodeFrame', () => {
  test('error: refuses an invalid frame', () => {
    expect(codeOf(() => encodeFrame(createFrame('ping', { ts: 1.5 })))).toBe('schema_violation');
  });
});
