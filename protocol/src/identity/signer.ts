import type { Hex, LocalAccount } from 'viem';

/** Anything that signs EIP-191 personal messages: a viem local account (`privateKeyToAccount`). */
export type MessageSigner = Pick<LocalAccount, 'address' | 'signMessage'>;

export type { Hex };
