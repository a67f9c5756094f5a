import { randomBytes, randomUUID } from 'node:crypto';
import { PROTOCOL_VERSION, ttlMsFor } from '../../constants.js';
import { createFrame } from '../../create-frame.js';
import { verifyChallenge } from '../../identity/verify-challenge.js';
import { verifyManifest } from '../../identity/verify-manifest.js';
import { verifyOwnerProof } from '../../identity/verify-owner-proof.js';
import type { Manifest } from '../../manifest.js';
import type { HelloFrame, WelcomeFrame } from '../../messages.js';
import { SCOPE_FOR_FAMILY, SCOPES } from '../../scopes.js';
import { TIER_BENEFITS } from '../../tiers.js';
import { check } from '../failure.js';
import type { NodeScenarioContext } from './context.js';

export const KIT_COORDINATOR_ID = 'gpumesh-conformance';

export type GreetedNode = { hello: HelloFrame; welcome: WelcomeFrame; welcomeAt: number };
export type AdmittedNode = GreetedNode & { manifest: Manifest };

/**
 * Plays the coordinator's side of the handshake: hello → challenge → auth (verified) → welcome.
 * @throws ConformanceFailure when the node deviates.
 */
export async function greetNode(
  { socket, settings }: NodeScenarioContext,
  overrides: { maxConcurrentJobs?: number } = {},
): Promise<GreetedNode> {
  const hello = await socket.expect('hello', settings.stepTimeoutMs, []);
  check(
    hello.versions.includes(PROTOCOL_VERSION),
    `hello.versions ${JSON.stringify(hello.versions)} lacks 0`,
  );

  const now = Date.now();
  const challenge = createFrame('challenge', {
    nonce: randomBytes(16).toString('hex'),
    issuedAt: new Date(now).toISOString(),
    expiresAt: new Date(now + 60_000).toISOString(),
    coordinatorId: KIT_COORDINATOR_ID,
  });
  socket.send(challenge);

  const auth = await socket.expect('auth', settings.stepTimeoutMs, []);
  const signed = await verifyChallenge({ challenge, nodeId: hello.nodeId, signature: auth.signature });
  check(signed, 'auth.signature is not the node key’s EIP-191 signature of challengeText(challenge, nodeId)');
  if (auth.owner) {
    check(await verifyOwnerProof(hello.nodeId, auth.owner), 'auth.owner.signature does not prove the owner');
  }

  const welcome = createFrame('welcome', {
    version: PROTOCOL_VERSION,
    sessionId: randomUUID(),
    heartbeatIntervalMs: settings.heartbeatIntervalMs,
    ttlMs: ttlMsFor(settings.heartbeatIntervalMs),
    maxFrameBytes: settings.maxFrameBytes,
    tier: 'platinum',
    scopes: [...SCOPES],
    maxConcurrentJobs: overrides.maxConcurrentJobs ?? TIER_BENEFITS.platinum.maxConcurrency,
  });
  const welcomeAt = Date.now();
  socket.send(welcome);
  return { hello, welcome, welcomeAt };
}

/**
 * greetNode, then the manifest: it must follow welcome, match the session and carry the node key's
 * signature; the kit acknowledges it with every scope and model.
 */
export async function admitNode(
  context: NodeScenarioContext,
  overrides: { maxConcurrentJobs?: number } = {},
): Promise<AdmittedNode> {
  const greeted = await greetNode(context, overrides);
  const { hello, welcome } = greeted;
  const frame = await context.socket.expect('manifest', context.settings.stepTimeoutMs, ['pong']);
  const { manifest } = frame;
  check(
    manifest.nodeId.toLowerCase() === hello.nodeId.toLowerCase(),
    'manifest.nodeId differs from hello.nodeId',
  );
  check(manifest.role === hello.role, 'manifest.role differs from hello.role');
  check(
    manifest.protocolVersion === welcome.version,
    'manifest.protocolVersion differs from the negotiated one',
  );
  check(
    await verifyManifest(manifest, frame.signature),
    'manifest signature does not recover to the node id',
  );
  for (const model of manifest.models) {
    const scope = SCOPE_FOR_FAMILY[model.family];
    check(
      manifest.scopes.includes(scope),
      `model ${model.id} (${model.family}) needs scope ${scope}, not claimed`,
    );
  }
  context.socket.send(
    createFrame('manifest_ack', { scopes: manifest.scopes, models: manifest.models.map((m) => m.id) }),
  );
  return { ...greeted, manifest };
}

/** admitNode, then the node's first presence (a conforming node reports it right after manifest_ack). */
export async function admitAndSettle(
  context: NodeScenarioContext,
  overrides: { maxConcurrentJobs?: number } = {},
): Promise<AdmittedNode> {
  const admitted = await admitNode(context, overrides);
  await context.socket.expect('presence', context.settings.stepTimeoutMs);
  return admitted;
}
