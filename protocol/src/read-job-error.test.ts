import { describe, expect, test } from 'vitest';
import { createFrame } from './create-frame.js';
import { PROTOCOL_ERRORS } from './errors.js';
import { readJobError } from './read-job-error.js';

describe('readJobError', () => {
  test('default: the registry code, its retryable, the message and usage', () => {
    const usage = { prompt_tokens: 4, completion_tokens: 1, total_tokens: 5 };
    const frame = createFrame('error', {
      jobId: 'job-1',
      code: 'job_cancelled',
      message: 'cancelled',
      retryable: false,
      usage,
    });
    expect(readJobError(frame)).toEqual({
      jobId: 'job-1',
      code: 'job_cancelled',
      retryable: false,
      message: 'cancelled',
      usage,
    });
  });

  test('behavior: retryable is the registry’s, whatever the sender said', () => {
    const refusal = createFrame('error', {
      jobId: 'j',
      code: 'invalid_request',
      message: 'm',
      retryable: true,
    });
    expect(readJobError(refusal)?.retryable).toBe(false);
    const busy = createFrame('error', { jobId: 'j', code: 'overloaded', message: 'm', retryable: false });
    expect(readJobError(busy)?.retryable).toBe(true);
  });

  test('behavior: an unknown code reads as internal_error', () => {
    const frame = createFrame('error', { jobId: 'j', code: 'made_up_code', message: 'm', retryable: false });
    expect(readJobError(frame)).toMatchObject({
      code: 'internal_error',
      retryable: PROTOCOL_ERRORS.internal_error.retryable,
    });
  });

  test('behavior: an error about the session is no job error', () => {
    const frame = createFrame('error', { code: 'out_of_order', message: 'm', retryable: false });
    expect(readJobError(frame)).toBeUndefined();
  });
});
