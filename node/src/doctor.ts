import { getLlama } from 'node-llama-cpp';
import WebSocket from 'ws';
import { hubUrls, type NodeConfig } from './config.js';
import { detectHardware } from './hardware/detect-hardware.js';
import type { HardwareSource } from './hardware/hardware-source.js';
import { createRuntime } from './runtimes/create-runtime.js';
import { listLocalModels } from './runtimes/local-models.js';

/** One doctor check: what was looked at, whether it is fine, and what to do when it is not. */
export type DoctorCheck = { name: string; ok: boolean; detail: string; fix?: string };

export const DOCTOR_TIMEOUT_MS = 5_000;
/** Clocks further apart than this break challenge expiry (60 s) and manifest timestamps. */
export const MAX_CLOCK_SKEW_MS = 30_000;

/**
 * Checks what a node needs to earn: the coordinator is reachable, model files are present, the
 * runtime loads them, a GPU backend is found (gpu role), and the clock agrees with the coordinator's.
 */
export async function runDoctor(
  config: NodeConfig,
  options: { hardwareSource?: HardwareSource } = {},
): Promise<DoctorCheck[]> {
  const checks: DoctorCheck[] = [];
  // Every replica the node may move to must be reachable.
  for (const hub of hubUrls(config.coordinator)) {
    const reached = await probeHub(hub);
    checks.push({
      name: 'coordinator reachable',
      ok: reached.ok,
      detail: reached.ok ? `${hub} accepted a WebSocket` : `${hub}: ${reached.error}`,
      fix: 'check --coordinator (or GPUMESH_COORDINATOR), the network and any firewall between this machine and it',
    });
  }

  if (config.runtime === 'llama') {
    const models = await listLocalModels(config).catch(() => []);
    checks.push({
      name: 'model files present',
      ok: models.length > 0,
      detail:
        models.length > 0 ? models.map((m) => m.file).join(', ') : `no .gguf file in ${config.modelsDir}`,
      fix: `put GGUF model files in ${config.modelsDir} (or set --models-dir)`,
    });
  }

  try {
    const { runtime } = await createRuntime(
      config,
      config.runtime === 'llama'
        ? { llama: await getLlama({ gpu: config.gpu === 'cpu' ? false : 'auto' }) }
        : {},
    );
    await runtime.load();
    checks.push({
      name: 'runtime loads',
      ok: runtime.models().length > 0,
      detail: `${runtime.info.name}: ${
        runtime
          .models()
          .map((m) => m.id)
          .join(', ') || 'no models'
      }`,
      fix:
        config.runtime === 'openai'
          ? `start the server at ${config.openaiUrl} and load a model`
          : 'add a GGUF model',
    });
    await runtime.close();
  } catch (error) {
    checks.push({
      name: 'runtime loads',
      ok: false,
      detail: (error as Error).message,
      fix:
        config.runtime === 'openai'
          ? `check that ${config.openaiUrl} answers /models`
          : 'check the GGUF files (re-download a corrupt one)',
    });
  }

  const hardware = await detectHardware(options.hardwareSource);
  const gpuFound = hardware.backend !== 'cpu';
  checks.push({
    name: 'GPU backend found',
    ok: gpuFound || config.role !== 'gpu',
    detail: gpuFound
      ? `${hardware.backend} (${hardware.gpus.map((gpu) => gpu.name).join(', ')})`
      : `cpu only (${hardware.gpus.length} GPU(s) seen, no CUDA/Vulkan/Metal build usable)`,
    fix: 'install the GPU driver, then re-run install.sh --role gpu to get the CUDA or Vulkan build',
  });

  const skew = await clockSkewMs(config.coordinator);
  checks.push({
    name: 'clock sane',
    ok: skew !== undefined && Math.abs(skew) <= MAX_CLOCK_SKEW_MS,
    detail:
      skew === undefined
        ? 'could not read the coordinator clock (unreachable, or no Date header)'
        : `${Math.round(skew / 1000)} s from the coordinator`,
    fix: 'enable time sync (timedatectl set-ntp true)',
  });
  return checks;
}

async function probeHub(url: string): Promise<{ ok: boolean; error?: string }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { handshakeTimeout: DOCTOR_TIMEOUT_MS });
    ws.once('open', () => {
      ws.close(1000, 'doctor');
      resolve({ ok: true });
    });
    ws.once('error', (error) => resolve({ ok: false, error: error.message }));
  });
}

/** Local clock minus the coordinator's (from an HTTP Date header), in ms. */
async function clockSkewMs(coordinator: string): Promise<number | undefined> {
  const url = new URL(coordinator);
  url.protocol = url.protocol === 'wss:' ? 'https:' : url.protocol === 'ws:' ? 'http:' : url.protocol;
  url.pathname = '/';
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(DOCTOR_TIMEOUT_MS) });
    const date = response.headers.get('date');
    return date ? Date.now() - Date.parse(date) : undefined;
  } catch {
    return undefined;
  }
}
