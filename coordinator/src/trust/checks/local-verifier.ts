/**
 * The coordinator's own verifier, for models no network node holds: when `trust.verifierModelsDir`
 * is set, the GGUF files there are loaded with the node daemon's llama runtime (@gpumesh/node, the
 * same code a network node runs for `verify` jobs, CPU only) and canaries and spot checks of nodes
 * claiming one of those files' sha256 are scored here. A network node holding the weights is still
 * preferred: the coordinator's CPU is better spent routing.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';

/** What the canary runner needs: which weights it holds, and a verify job on them. */
export type LocalVerifier = {
  /** The model id it serves for these weights, or undefined. */
  modelFor(sha256: string): string | undefined;
  /** Runs a `verify` job (NODE_PROTOCOL.md "Verification"); the response as a node's result. */
  verify(
    model: string,
    request: Record<string, unknown>,
  ): Promise<Record<string, unknown> & { usage: { prompt_tokens: number } }>;
  close(): Promise<void>;
};

/** Loads the models of `modelsDir` (hashing them once; the cache goes to `stateDir`). */
export async function startLocalVerifier(options: {
  modelsDir: string;
  stateDir: string;
}): Promise<LocalVerifier> {
  // Loaded only when configured: the coordinator runs without node-llama-cpp otherwise.
  const node = await import('@gpumesh/node');
  mkdirSync(options.stateDir, { recursive: true });
  const config = node.loadConfig({
    flags: {
      'models-dir': path.resolve(options.modelsDir),
      'state-dir': path.resolve(options.stateDir),
      gpu: 'cpu',
      threads: '1',
      'max-concurrency': '1',
    },
    env: {},
  });
  const { runtime } = await node.createRuntime(config);
  await runtime.load();
  const bySha = new Map<string, string>();
  for (const m of runtime.models()) {
    if (m.sha256 && (m.family === 'chat' || m.family === 'text')) bySha.set(m.sha256, m.id);
  }
  return {
    modelFor: (sha256) => bySha.get(sha256),
    verify: async (model, request) =>
      (await runtime.run({ kind: 'verify', model, request, stream: false })) as Awaited<
        ReturnType<LocalVerifier['verify']>
      >,
    close: () => runtime.close(),
  };
}
