import type { ChallengeFrame } from '../messages.js';
import { challengeText } from './challenge-text.js';
import { recoverSigner } from './recover-signer.js';

export type VerifyChallengeParameters = {
  challenge: Omit<ChallengeFrame, 'v' | 'type'>;
  nodeId: string;
  signature: string;
  /** Current time in ms since the epoch (default: Date.now()). */
  now?: number;
};

/** True when `signature` is the node key's signature of the challenge and the challenge is unexpired. */
export async function verifyChallenge({
  challenge,
  nodeId,
  signature,
  now = Date.now(),
}: VerifyChallengeParameters): Promise<boolean> {
  const expiresAt = Date.parse(challenge.expiresAt);
  if (!Number.isFinite(expiresAt) || now > expiresAt) return false;
  const signer = await recoverSigner(challengeText(challenge, nodeId), signature);
  return signer !== undefined && signer === nodeId.toLowerCase();
}
