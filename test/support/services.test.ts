import { describe, expect, it } from 'vitest';
import { probeServices } from './services.js';

describe('probeServices', () => {
  it('behavior: finds the PostgreSQL and Redis the global setup found', async () => {
    const found = await probeServices();
    expect(found.postgres ?? '').toBe(process.env.GPUMESH_TEST_PG_URL);
    expect(found.redis ?? '').toBe(process.env.GPUMESH_TEST_REDIS_URL);
  });

  it('error: an unreachable service is reported as null', async () => {
    const saved = process.env.GPUMESH_TEST_REDIS_URL;
    process.env.GPUMESH_TEST_REDIS_URL = 'redis://127.0.0.1:1';
    try {
      expect((await probeServices()).redis).toBeNull();
    } finally {
      process.env.GPUMESH_TEST_REDIS_URL = saved;
    }
  });
});
