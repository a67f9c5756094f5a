import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { toApiError } from './error-handler.js';
import { ApiError, ERRORS, isErrorBody } from './errors.js';

describe('ERRORS', () => {
  test('behavior: every code is documented in coordinator/README.md and every documented code exists', () => {
    const readme = readFileSync(path.join(import.meta.dirname, '..', 'README.md'), 'utf8');
    const table = readme.slice(readme.indexOf('## Errors'));
    const documented = new Map<string, number>();
    for (const m of table.matchAll(/^\|\s*`([a-z_]+)`\s*\|\s*(\d{3})\s*\|/gm))
      documented.set(m[1]!, Number(m[2]));
    const registry = new Map(Object.entries(ERRORS).map(([code, def]) => [code, def.status]));
    expect(Object.fromEntries(documented)).toEqual(Object.fromEntries(registry));
  });
});

describe('toApiError', () => {
  test('default: ours pass through with the common shape', () => {
    const error = new ApiError('key_limit_reached', undefined, { param: 'name' });
    expect(toApiError(error)).toBe(error);
    expect(error.toBody()).toEqual({
      error: {
        message: ERRORS.key_limit_reached.message,
        type: 'invalid_request_error',
        code: 'key_limit_reached',
        param: 'name',
      },
    });
    expect(isErrorBody(error.toBody())).toBe(true);
  });

  test('behavior: validation errors name the parameter', () => {
    const mapped = toApiError({
      validation: [
        {
          instancePath: '',
          params: { missingProperty: 'name' },
          message: "must have required property 'name'",
        },
      ],
      validationContext: 'body',
    });
    expect(mapped.code).toBe('invalid_request');
    expect(mapped.param).toBe('name');
  });

  test('error: foreign errors become internal_error without their text', () => {
    const mapped = toApiError(new Error('relation "users" does not exist SELECT * FROM users'));
    expect(mapped.code).toBe('internal_error');
    expect(JSON.stringify(mapped.toBody())).not.toContain('SELECT');
    expect(toApiError({ statusCode: 429 }).code).toBe('rate_limited');
    expect(toApiError({ code: 'FST_ERR_CTP_BODY_TOO_LARGE', statusCode: 413 }).code).toBe(
      'payload_too_large',
    );
  });
});
