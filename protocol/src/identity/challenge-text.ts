import type { ChallengeFrame } from '../messages.js';

/**
 * The exact text a node signs (EIP-191 personal_sign) to answer a challenge. Lines are joined by
 * `\n`, no trailing newline; the node id is lower-case.
 */
export function challengeText(challenge: Omit<ChallengeFrame, 'v' | 'type'>, nodeId: string): string {
  return [
    'gpumesh node authentication',
    `Coordinator: ${challenge.coordinatorId}`,
    `Node: ${nodeId.toLowerCase()}`,
    `Nonce: ${challenge.nonce}`,
    `Issued At: ${challenge.issuedAt}`,
    `Expiration Time: ${challenge.expiresAt}`,
  ].join('\n');
}
