import type { Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import {
  MIN_HEARTBEAT_INTERVAL_MS,
  MIN_MAX_FRAME_BYTES,
  PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
  ttlMsFor,
} from '../../constants.js';
import { createFrame } from '../../create-frame.js';
import { signChallenge } from '../../identity/sign-challenge.js';
import { signManifest } from '../../identity/sign-manifest.js';
import type { Manifest } from '../../manifest.js';
import type { ChallengeFrame, ManifestAckFrame, WelcomeFrame } from '../../messages.js';
import { check } from '../failure.js';
import type { FrameSocket } from '../frame-socket.js';
import type { CoordinatorKitSettings } from './context.js';

/** The node the kit plays: a fresh key per scenario, one chat and one embedding model. */
export type KitNode = {
  account: ReturnType<typeof privateKeyToAccount>;
  manifest: Manifest;
};

export function createKitNode(
  settings: CoordinatorKitSettings,
  privateKey: Hex = generatePrivateKey(),
): KitNode {
  const account = privateKeyToAccount(privateKey);
  const free = { currency: 'USD', inputPerMTok: '0', outputPerMTok: '0' } as const;
  const manifest: Manifest = {
    nodeId: account.address,
    role: 'cpu',
    hardware: {
      gpus: [],
      cpu: { model: 'conformance kit', cores: 1, threads: 1, arch: 'x64' },
      ramBytes: 1024 ** 3,
    },
    runtimes: [{ name: 'gpumesh-conformance', version: String(PROTOCOL_VERSION) }],
    models: [
      { id: settings.chatModel, family: 'chat', contextLength: 2048, maxConcurrency: 1, price: free },
      {
        id: settings.embeddingModel,
        family: 'embedding',
        contextLength: 512,
        maxConcurrency: 1,
        price: free,
      },
    ],
    scopes: ['infer.chat', 'infer.embed'],
    software: { name: 'gpumesh-conformance', version: String(PROTOCOL_VERSION) },
    protocolVersion: PROTOCOL_VERSION,
    issuedAt: new Date().toISOString(),
  };
  return { account, manifest };
}

export function sendHello(
  socket: FrameSocket,
  node: KitNode,
  versions: number[] = [...SUPPORTED_PROTOCOL_VERSIONS],
) {
  socket.send(
    createFrame('hello', {
      nodeId: node.account.address,
      role: 'cpu',
      versions,
      software: { name: 'gpumesh-conformance', version: String(PROTOCOL_VERSION) },
    }),
  );
}

/** hello → challenge (checked); returns the challenge. */
export async function requestChallenge(
  socket: FrameSocket,
  node: KitNode,
  settings: CoordinatorKitSettings,
): Promise<ChallengeFrame> {
  sendHello(socket, node);
  const challenge = await socket.expect('challenge', settings.stepTimeoutMs, []);
  const expiresAt = Date.parse(challenge.expiresAt);
  check(expiresAt > Date.now(), `the challenge expired at ${challenge.expiresAt}, before it arrived`);
  check(expiresAt > Date.parse(challenge.issuedAt), 'challenge.expiresAt is not after issuedAt');
  return challenge;
}

/** The full handshake: hello → challenge → auth → welcome (checked). */
export async function authenticate(
  socket: FrameSocket,
  node: KitNode,
  settings: CoordinatorKitSettings,
): Promise<WelcomeFrame> {
  const challenge = await requestChallenge(socket, node, settings);
  socket.send(createFrame('auth', { signature: await signChallenge(challenge, node.account) }));
  const welcome = await socket.expect('welcome', settings.stepTimeoutMs, []);
  check(
    welcome.version === PROTOCOL_VERSION,
    `welcome.version ${welcome.version}, expected ${PROTOCOL_VERSION}`,
  );
  check(
    welcome.ttlMs === ttlMsFor(welcome.heartbeatIntervalMs),
    `welcome.ttlMs ${welcome.ttlMs} is not 2 × heartbeatIntervalMs ${welcome.heartbeatIntervalMs}`,
  );
  check(
    welcome.heartbeatIntervalMs >= MIN_HEARTBEAT_INTERVAL_MS,
    'welcome.heartbeatIntervalMs is below the minimum',
  );
  check(
    welcome.maxFrameBytes >= MIN_MAX_FRAME_BYTES,
    `welcome.maxFrameBytes is below ${MIN_MAX_FRAME_BYTES}`,
  );
  socket.maxBytes = welcome.maxFrameBytes;
  socket.startHeartbeat(welcome.heartbeatIntervalMs);
  return welcome;
}

/** Handshake + signed manifest → manifest_ack (checked) + presence online. */
export async function join(
  socket: FrameSocket,
  node: KitNode,
  settings: CoordinatorKitSettings,
): Promise<{ welcome: WelcomeFrame; ack: ManifestAckFrame }> {
  const welcome = await authenticate(socket, node, settings);
  socket.send(
    createFrame('manifest', {
      manifest: node.manifest,
      signature: await signManifest(node.manifest, node.account),
    }),
  );
  const ack = await socket.expect('manifest_ack', settings.stepTimeoutMs);
  const claimed = node.manifest.scopes;
  for (const scope of ack.scopes) {
    check(claimed.includes(scope), `manifest_ack grants ${scope}, which the manifest did not claim`);
    check(welcome.scopes.includes(scope), `manifest_ack grants ${scope}, which welcome did not allow`);
  }
  for (const id of ack.models) {
    check(
      node.manifest.models.some((m) => m.id === id),
      `manifest_ack lists model ${id}, not in the manifest`,
    );
  }
  socket.send(createFrame('presence', { status: 'online', load: { inFlight: 0, capacity: 1 } }));
  // A coordinator handles a session's frames in order, so the pong proves the presence was applied.
  socket.send(createFrame('ping', { ts: 1 }));
  await socket.expect('pong', settings.stepTimeoutMs, []);
  return { welcome, ack };
}
