import { createHash } from 'node:crypto';
import type { Manifest } from '@gpumesh/protocol';

/**
 * OpenAI's `system_fingerprint` for a node's offer: `fp_` and 16 hex digits of the SHA-256 of the
 * node's software, its runtimes and the weights' hash — what OpenAI's fingerprint stands for (the
 * backend configuration an answer came from): it changes when the node's software or the weights
 * change, and is the same on two nodes running the same software on the same file. Computed once
 * per manifest, never per request.
 */
export function offerFingerprint(manifest: Manifest, model: Manifest['models'][number]): string {
  const runtimes = manifest.runtimes.map((r) => `${r.name}@${r.version}`).sort();
  const parts = [
    `${manifest.software.name}@${manifest.software.version}`,
    ...runtimes,
    model.sha256?.toLowerCase() ?? `id:${model.id}`,
  ];
  return `fp_${createHash('sha256').update(parts.join('\n')).digest('hex').slice(0, 16)}`;
}
