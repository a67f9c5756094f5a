import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { GAS_PRICE_WEI } from './chain/constants.js';
import {
  DEFAULT_GAS_PRICE_WEI,
  DEFAULT_JWT_TTL_S,
  DEFAULT_NATIVE_USD_PRICE_NANO,
  DEFAULT_PAYOUT_DAILY_CAP_NANO,
  DEFAULT_PAYOUT_MIN_NANO,
  loadConfig,
} from './config.js';
import { ApiError } from './errors.js';
import { NANOUSD_PER_USD } from './ledger/money.js';

describe('loadConfig', () => {
  test('default', () => {
    const config = loadConfig();
    expect(config.port).toBe(8080);
    expect(config.jwtTtlS).toBe(DEFAULT_JWT_TTL_S);
    expect(config.chain.chainId).toBe(800000);
    expect(config.chain.gasPriceWei).toBe(DEFAULT_GAS_PRICE_WEI);
    expect(config.publicUrl).toBe('http://127.0.0.1:8080');
    expect(config.routerUrl).toBe(config.publicUrl);
    expect(config.databaseUrl).toBeUndefined();
    expect(config.staking.tiers.map((t) => t.name)).toEqual(['none', 'basic', 'silver', 'gold', 'platinum']);
    expect(Object.isFrozen(config.chain)).toBe(true);
  });

  test('behavior: flags > environment > file > defaults', () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'gm-cfg-')), 'c.json');
    writeFileSync(
      file,
      JSON.stringify({ port: 1000, host: 'file-host', chain: { confirmations: 3, gasPriceWei: '7' } }),
    );
    const config = loadConfig({
      file,
      env: { GPUMESH_PORT: '2000', GPUMESH_CHAIN_CONFIRMATIONS: '4', DATABASE_URL: 'postgres://x@y/z' },
      argv: ['--port', '3000', '--chain-rpc-url=http://127.0.0.1:8545', '--rate-limit-user-max', '5'],
    });
    expect(config.port).toBe(3000);
    expect(config.host).toBe('file-host');
    expect(config.chain.confirmations).toBe(4);
    expect(config.chain.gasPriceWei).toBe(7n);
    expect(config.chain.rpcUrl).toBe('http://127.0.0.1:8545');
    expect(config.rateLimit.userMax).toBe(5);
    expect(config.databaseUrl).toBe('postgres://x@y/z');
  });

  test('behavior: object fields take JSON from the environment', () => {
    const token = `0x${'11'.repeat(20)}`;
    const config = loadConfig({ env: { GPUMESH_CHAIN_TOKENS: JSON.stringify({ 'USD.s': token }) } });
    expect(config.chain.tokens).toEqual({ 'USD.s': token });
  });

  test('error: invalid values name the field', () => {
    expect(() => loadConfig({ env: { GPUMESH_PORT: 'eighty' } })).toThrow(ApiError);
    expect(() => loadConfig({ overrides: { chain: { chainId: -1 } } })).toThrow(/chain\.chainId/);
    expect(() => loadConfig({ overrides: { nope: 1 } })).toThrow(ApiError);
  });

  test('error: media limits that would not fit a job frame as base64', () => {
    expect(() => loadConfig({ overrides: { media: { maxAudioBytes: 4 * 1024 * 1024 } } })).toThrow(
      /media\.maxAudioBytes/,
    );
    expect(() =>
      loadConfig({
        overrides: {
          router: { maxFrameBytes: 1024 * 1024 },
          media: { maxAudioBytes: 512 * 1024, maxImageBytes: 1024 * 1024 },
        },
      }),
    ).toThrow(/media\.maxImageBytes/);
  });
});

// config-schema.ts sits below the ledger and the chain, so it writes these out; they must agree.
test('behavior: money and chain defaults agree with ledger/money.ts and chain/constants.ts', () => {
  expect(DEFAULT_PAYOUT_MIN_NANO).toBe(NANOUSD_PER_USD / 100n);
  expect(DEFAULT_PAYOUT_DAILY_CAP_NANO).toBe(1_000n * NANOUSD_PER_USD);
  expect(DEFAULT_NATIVE_USD_PRICE_NANO).toBe(NANOUSD_PER_USD);
  expect(DEFAULT_GAS_PRICE_WEI).toBe(GAS_PRICE_WEI);
});
