import type { ChallengeFrame } from '../messages.js';
import { challengeText } from './challenge-text.js';
import type { Hex, MessageSigner } from './signer.js';

/** The node's `auth.signature`: its key signs `challengeText(challenge, its address)`. */
export function signChallenge(
  challenge: Omit<ChallengeFrame, 'v' | 'type'>,
  node: MessageSigner,
): Promise<Hex> {
  return node.signMessage({ message: challengeText(challenge, node.address) });
}
