import { PROTOCOL_ERROR_CODES, PROTOCOL_ERRORS } from '@gpumesh/protocol';
import { describe, expect, test } from 'vitest';
import { failsOver, mapJobError } from './job-errors.js';

const jobError = (code: string, retryable = false) => ({ code, message: 'm', retryable });

describe('failsOver', () => {
  test('default: the protocol registry decides, not the node’s flag', () => {
    for (const code of PROTOCOL_ERROR_CODES) {
      expect([code, failsOver(jobError(code, !PROTOCOL_ERRORS[code].retryable))]).toEqual([
        code,
        PROTOCOL_ERRORS[code].retryable,
      ]);
    }
    expect(failsOver(jobError('overloaded'))).toBe(true);
    expect(failsOver(jobError('job_cancelled', true))).toBe(false);
  });

  test('behavior: a lost node fails over; an unknown code is an internal_error', () => {
    expect(failsOver(jobError('node_lost'))).toBe(true);
    expect(failsOver(jobError('made_up_code'))).toBe(PROTOCOL_ERRORS.internal_error.retryable);
  });
});

describe('mapJobError', () => {
  test('behavior: every candidate at capacity is 503 no_provider_available with Retry-After', () => {
    for (const code of ['overloaded', 'draining']) {
      const error = mapJobError(jobError(code, true));
      expect([error.status, error.code, error.retryAfterS]).toEqual([503, 'no_provider_available', 1]);
    }
    expect(mapJobError(jobError('job_timeout')).code).toBe('provider_timeout');
    expect(mapJobError(jobError('runtime_error')).status).toBe(502);
  });
});
