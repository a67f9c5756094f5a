import { encodeFunctionData, type Hash, type LocalAccount, parseEther, parseUnits } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ApiError } from '../errors.js';
import { createChainContext } from './chain-context.js';
import { CHAIN_ID, GAS_PRICE_WEI, type StableSymbol } from './constants.js';
import { type Devnet, startDevnet } from './devnet.js';
import { sendTransaction } from './send-transaction.js';
import { stableTokenArtifact } from './stable-token-artifact.js';
import { type VerifyPaymentParameters, verifyPayment } from './verify-payment.js';

describe('verifyPayment', () => {
  let devnet: Devnet;
  let payer: LocalAccount;
  const recipient = privateKeyToAccount(generatePrivateKey()).address;
  beforeAll(async () => {
    devnet = await startDevnet();
    payer = devnet.accounts[0]!.account;
  });
  afterAll(async () => devnet?.stop());

  const transferToken = (symbol: StableSymbol, to: `0x${string}`, amount: bigint) =>
    sendTransaction(devnet.context, {
      account: payer,
      to: devnet.tokens[symbol],
      data: encodeFunctionData({
        abi: stableTokenArtifact.abi,
        functionName: 'transfer',
        args: [to, amount],
      }),
    });
  const verify = (hash: string, source: VerifyPaymentParameters['source'], confirmations = 1) =>
    verifyPayment(devnet.context, { hash, source, recipient, tokens: devnet.tokens, confirmations });
  const code = (promise: Promise<unknown>) =>
    promise.then(
      () => 'resolved',
      (error: unknown) => (error instanceof ApiError ? error.code : `foreign: ${String(error)}`),
    );

  test('default: a USDC.s transfer to the recipient is confirmed with its amount', async () => {
    const { hash } = await transferToken('USDC.s', recipient, parseUnits('25.5', 6));
    const result = await verify(hash, 'USDC.s');
    expect(result).toMatchObject({ status: 'confirmed', amount: 25_500_000n });
  });

  test('behavior: native value is counted for source native', async () => {
    const { hash } = await sendTransaction(devnet.context, {
      account: payer,
      to: recipient,
      value: parseEther('2'),
    });
    expect(await verify(hash, 'native')).toMatchObject({ status: 'confirmed', amount: parseEther('2') });
    expect(await verify(hash.toUpperCase().replace('0X', '0x'), 'native')).toMatchObject({
      status: 'confirmed',
    });
  });

  test('behavior: pending until the configured confirmations', async () => {
    const { hash } = await transferToken('USD.s', recipient, 1n);
    const result = await verify(hash, 'USD.s', 1_000);
    expect(result).toMatchObject({ status: 'pending', amount: 1n });
  });

  test('behavior: a payment mined after the client last read the head is confirmed, not pending', async () => {
    // A client that keeps what it read of the head for a minute (viem caches it for its polling
    // interval): verifyPayment must read the head again, or a fresh receipt counts 0 confirmations.
    const cached = createChainContext({
      rpcUrl: devnet.rpcUrl,
      nativeSymbol: 'TOK',
      pollingIntervalMs: 60_000,
    });
    const headBefore = await cached.client.getBlockNumber();
    const { hash, receipt } = await transferToken('USDC.s', recipient, 7n);
    expect(receipt.blockNumber).toBeGreaterThan(headBefore);
    const result = await verifyPayment(cached, {
      hash,
      source: 'USDC.s',
      recipient,
      tokens: devnet.tokens,
      confirmations: 1,
    });
    expect(result).toMatchObject({ status: 'confirmed', amount: 7n, confirmations: 1 });
  });

  test('error: refusals carry their codes', async () => {
    const elsewhere = await transferToken('USDC.s', devnet.accounts[1]!.address, 5n);
    expect(await code(verify(elsewhere.hash, 'USDC.s'))).toBe('payment_wrong_recipient');
    const usdt = await transferToken('USDT.s', recipient, 5n);
    expect(await code(verify(usdt.hash, 'USDC.s'))).toBe('payment_wrong_token');
    expect(await code(verify(usdt.hash, 'native'))).toBe('payment_wrong_token');
    expect(await code(verify(`0x${'ab'.repeat(32)}`, 'USDC.s'))).toBe('payment_not_found');
    expect(await code(verify('0x1234', 'USDC.s'))).toBe('invalid_request');
    expect(await code(verify(`0x${'zz'.repeat(32)}`, 'USDC.s'))).toBe('invalid_request');

    // A transfer of more than the payer holds reverts on chain.
    const poor = privateKeyToAccount(generatePrivateKey());
    await devnet.fund(poor.address, { nativeWei: parseEther('1') });
    const serializedTransaction = await poor.signTransaction({
      type: 'legacy',
      chainId: CHAIN_ID,
      gasPrice: GAS_PRICE_WEI,
      gas: 100_000n,
      nonce: 0,
      to: devnet.tokens['USDC.s'],
      data: encodeFunctionData({
        abi: stableTokenArtifact.abi,
        functionName: 'transfer',
        args: [recipient, 1n],
      }),
    });
    const failed: Hash = await devnet.context.client.sendRawTransaction({ serializedTransaction });
    const receipt = await devnet.context.client.waitForTransactionReceipt({ hash: failed });
    expect(receipt.status).toBe('reverted');
    expect(await code(verify(failed, 'USDC.s'))).toBe('payment_failed');
  });

  test('error: an unreachable chain is chain_unavailable, without RPC text', async () => {
    // Nothing listens on port 1.
    const unreachable = createChainContext({ rpcUrl: 'http://127.0.0.1:1', nativeSymbol: 'TOK' });
    const error = await verifyPayment(unreachable, {
      hash: `0x${'ab'.repeat(32)}`,
      source: 'native',
      recipient,
      tokens: devnet.tokens,
      confirmations: 1,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).code).toBe('chain_unavailable');
    expect((error as ApiError).message).not.toMatch(/127\.0\.0\.1|fetch|ECONNREFUSED/);
  });
});
