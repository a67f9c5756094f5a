import { describe, expect, test } from 'vitest';
import { encodeFrame } from './encode-frame.js';
import { errorFrame, MAX_ERROR_MESSAGE_CHARS } from './error-frame.js';
import { PROTOCOL_ERRORS, ProtocolError } from './errors.js';

describe('errorFrame', () => {
  test('default: a job error with the registry message and retryable', () => {
    expect(errorFrame('overloaded', { jobId: 'job-1' })).toEqual({
      v: 0,
      type: 'error',
      jobId: 'job-1',
      code: 'overloaded',
      message: PROTOCOL_ERRORS.overloaded.message,
      retryable: true,
    });
  });

  test('behavior: a ProtocolError reports the session failure with its own message, no jobId', () => {
    const frame = errorFrame(new ProtocolError('out_of_order', 'job in phase manifest.'));
    expect(frame).toEqual({
      v: 0,
      type: 'error',
      code: 'out_of_order',
      message: `${PROTOCOL_ERRORS.out_of_order.message} job in phase manifest.`,
      retryable: false,
    });
  });

  test('behavior: the message is cut to the schema limit; usage goes along', () => {
    const usage = { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 };
    const frame = errorFrame('job_cancelled', { jobId: 'j', message: 'x'.repeat(5000), usage });
    expect(frame.message).toHaveLength(MAX_ERROR_MESSAGE_CHARS);
    expect(frame.usage).toEqual(usage);
    expect(frame.retryable).toBe(false);
    expect(() => encodeFrame(frame)).not.toThrow();
  });
});
