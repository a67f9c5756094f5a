import { PROTOCOL_VERSION } from '../../constants.js';
import type { Manifest } from '../../manifest.js';

/** Model ids the reference node serves (one chat model, one embedding model). */
export const REFERENCE_CHAT_MODEL = 'tiny-chat';
export const REFERENCE_EMBEDDING_MODEL = 'tiny-embed';

/** A small, valid CPU-node manifest for `nodeId` (used by the reference node and in tests). */
export function referenceManifest(nodeId: string, issuedAt = new Date().toISOString()): Manifest {
  return {
    nodeId,
    role: 'cpu',
    hardware: {
      gpus: [],
      cpu: { model: 'Reference CPU', cores: 2, threads: 2, arch: 'x64' },
      ramBytes: 4 * 1024 ** 3,
    },
    runtimes: [{ name: 'reference', version: '0.0.0' }],
    models: [
      {
        id: REFERENCE_CHAT_MODEL,
        family: 'chat',
        contextLength: 2048,
        maxConcurrency: 2,
        price: { currency: 'USD', inputPerMTok: '100000000', outputPerMTok: '200000000' },
      },
      {
        id: REFERENCE_EMBEDDING_MODEL,
        family: 'embedding',
        contextLength: 512,
        maxConcurrency: 2,
        price: { currency: 'NATIVE', inputPerMTok: '1000000000000000', outputPerMTok: '0' },
      },
    ],
    scopes: ['infer.chat', 'infer.embed'],
    software: { name: 'gpumesh-reference-node', version: '0.0.0' },
    protocolVersion: PROTOCOL_VERSION,
    issuedAt,
  };
}
