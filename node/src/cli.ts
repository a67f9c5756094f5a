/**
 * The gpumesh-node command. Only what parsing needs is imported up front; each command imports its
 * own modules (the daemon, node-llama-cpp, systeminformation, viem), so `--version` and `--help`
 * start fast.
 */
import { basename, join } from 'node:path';
import { parseArgs } from 'node:util';
import { CONFIG_FLAGS, loadConfig, type NodeConfig } from './config.js';
import { NodeError } from './errors.js';
import type { Hardware } from './hardware/detect-hardware.js';
import type { HubLogger } from './hub-client.js';
import { SOFTWARE } from './software.js';

const USAGE = `Usage: gpumesh-node <command> [flags]
       gpumesh-node --version

Commands:
  start     connect to the coordinator and serve inference (SIGTERM/SIGINT drain, then exit)
            (every other command takes --json: one JSON document on stdout)
  detect    show this machine's hardware (--json: the manifest's hardware part)
  id        print the node id (the node key's address) and the text an owner wallet signs
  link --owner 0x…
            the node key's consent to that wallet claiming this node from the dashboard
            (paste the signature there: POST /api/provider/nodes/link)
  doctor    check coordinator, models, runtime, GPU backend and clock; each failure with a fix
  status    the running node's state from its health endpoint (--json): connection, presence,
            jobs, tokens served, estimated earnings; exit 1 when it is not running or not online
  models    list local GGUF models and how they will be offered, with prices
  models info <file>    architecture, quantisation, parameters, context, memory on GPU/CPU, fit
  models rm <file>      remove a model file from the models folder
  models recommend      the coordinator's catalog models that fit this machine
  models pull <ref> [--sha256 HEX]
            download a GGUF (hf:<user>/<repo>/<file>.gguf, hf:<user>/<repo>:<quant>, https://…)
            into the models folder, resuming a partial download; checked against the
            coordinator's catalog (or --sha256) and removed on a mismatch

Settings (flags > GPUMESH_* environment > --config file > defaults):
  --coordinator URL  --role gpu|cpu|network  --state-dir DIR  --models-dir DIR  --config FILE
  --runtime llama|openai  --openai-url URL  --gpu auto|cpu  --gpu-layers auto|max|N  --gpus 0,1
  --threads N  --max-concurrency N
  --offer-embeddings  --health-port N  --owner-address 0x…  --owner-signature 0x…`;

/** Exit codes after a signal: 128 + its number, as shells report it. */
const EXIT_AFTER = { SIGINT: 130, SIGTERM: 143 } as const;

/** Runs one CLI command; resolves to the process exit code. */
export async function main(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const { command, args, values } = parsed;
  if (values.version) {
    console.log(SOFTWARE.version);
    return 0;
  }
  if (!command || values.help) {
    console.log(USAGE);
    return command || values.help ? 0 : 2;
  }
  try {
    const config = loadConfig({ flags: values as Record<string, string | boolean | undefined> });
    switch (command) {
      case 'start':
        return await start(config);
      case 'detect':
        return await detect(values.json === true);
      case 'id':
        return await id(config, values.json === true);
      case 'link':
        return await link(config, values.owner, values.json === true);
      case 'doctor':
        return await doctor(config, values.json === true);
      case 'status':
        return await status(config, values.json === true);
      case 'models':
        if (args[0] === 'pull') return await pull(config, args[1], values);
        if (args[0] === 'info') return await info(config, args[1], values.json === true);
        if (args[0] === 'rm') return await removeModel(config, args[1]);
        if (args[0] === 'recommend') return await recommend(config, values.json === true);
        if (args[0] !== undefined && args[0] !== 'list') {
          console.error(`Unknown models command ${args[0]}.\n\n${USAGE}`);
          return 2;
        }
        return await models(config, values.json === true);
      default:
        console.error(`Unknown command ${command}.\n\n${USAGE}`);
        return 2;
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      console.error(
        'gpumesh-node: the health port is taken (is another gpumesh-node running?); pass --health-port N (0: any free port).',
      );
      return 1;
    }
    const code = error instanceof NodeError ? error.code : 'internal_error';
    console.error(`gpumesh-node: ${code}: ${(error as Error).message}`);
    return 1;
  }
}

function parse(argv: string[]) {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      ...CONFIG_FLAGS,
      config: { type: 'string' },
      json: { type: 'boolean' },
      sha256: { type: 'string' },
      owner: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean' },
    },
  });
  return { command: positionals[0], args: positionals.slice(1), values };
}

function logger(): HubLogger {
  const line = (level: string, message: string, fields?: object) =>
    console.error(JSON.stringify({ time: new Date().toISOString(), level, msg: message, ...fields }));
  return { info: (m, f) => line('info', m, f), warn: (m, f) => line('warn', m, f) };
}

async function start(config: NodeConfig): Promise<number> {
  if (config.runtime === 'llama') {
    // A node with nothing to serve would sit idle, earning nothing: say so and stop.
    const { listLocalModels } = await import('./runtimes/local-models.js');
    if ((await listLocalModels(config)).length === 0) {
      console.error(
        `gpumesh-node: no model to serve: no .gguf file in ${config.modelsDir}. Get one with\n` +
          '  gpumesh-node models pull hf:<user>/<repo>/<file>.gguf\n(or set --models-dir).',
      );
      return 3;
    }
  }
  const { startDaemon } = await import('./daemon.js');
  const log = logger();
  let lastShown = '';
  const daemon = await startDaemon(config, {
    log,
    onLoadProgress: ({ model, loaded, total, fraction }) => {
      const shown = `loading ${model} (${loaded + 1}/${total}) ${Math.floor(fraction * 100)}%`;
      if (shown !== lastShown) process.stderr.write(`${shown}\n`);
      lastShown = shown;
    },
  });
  log.info('node started', {
    nodeId: daemon.nodeId,
    health: daemon.health.url,
    models: daemon.runtime.models(),
  });
  const signal = await new Promise<keyof typeof EXIT_AFTER | { refused: string }>((resolve) => {
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
    void daemon.refused.then((reason) => resolve({ refused: reason }));
  });
  if (typeof signal === 'object') {
    // Retrying can't help: a wrong owner address or signature (see `gpumesh-node id`).
    console.error(`gpumesh-node: auth_failed: the coordinator refused this node: ${signal.refused}`);
    await daemon.shutdown('refused');
    return 1;
  }
  log.info('draining before exit', { signal, inFlight: daemon.hub.inFlight });
  await daemon.shutdown(signal);
  log.info('node stopped', { signal });
  return EXIT_AFTER[signal];
}

async function detect(json: boolean): Promise<number> {
  const { detectHardware } = await import('./hardware/detect-hardware.js');
  const hardware = await detectHardware();
  if (json) {
    const { backend: _backend, ...manifestPart } = hardware;
    console.log(JSON.stringify(manifestPart, null, 2));
    return 0;
  }
  console.log(formatHardware(hardware));
  return 0;
}

/** Hardware as an aligned table. */
export function formatHardware(hardware: Hardware): string {
  const gib = (bytes: number) => `${(bytes / 1024 ** 3).toFixed(1)} GiB`;
  const rows: string[][] = [
    [
      'CPU',
      `${hardware.cpu.model} — ${hardware.cpu.cores} cores, ${hardware.cpu.threads} threads, ${hardware.cpu.arch}`,
    ],
    ['RAM', gib(hardware.ramBytes)],
    ['Backend', hardware.backend],
    ...hardware.gpus.map((gpu) => [
      `GPU ${gpu.index}`,
      `${gpu.vendor} ${gpu.name} — ${gib(gpu.vramTotalBytes)} (${gib(gpu.vramFreeBytes)} free), driver ${gpu.driver || 'unknown'}, ${gpu.backend}`,
    ]),
  ];
  if (hardware.gpus.length === 0) rows.push(['GPUs', 'none found']);
  return table(rows);
}

async function id(config: NodeConfig, json: boolean): Promise<number> {
  const [{ ownerProofText }, { nodeKeyPath }, { loadNodeIdentity }] = await Promise.all([
    import('@gpumesh/protocol'),
    import('./daemon.js'),
    import('./identity.js'),
  ]);
  const identity = await loadNodeIdentity(nodeKeyPath(config));
  if (json) {
    console.log(JSON.stringify({ nodeId: identity.nodeId, ownerProofText: ownerProofText(identity.nodeId) }));
    return 0;
  }
  console.log(identity.nodeId);
  console.error(
    `\nTo link this node to your staking wallet, sign this exact text with it (personal_sign) and set\n` +
      `--owner-address and --owner-signature:\n\n${ownerProofText(identity.nodeId)}\n`,
  );
  return 0;
}

/** The node key's signature of `nodeLinkText(nodeId, owner)`: its consent to the owner's claim. */
async function link(config: NodeConfig, owner: string | undefined, json: boolean): Promise<number> {
  if (!owner || !/^0x[0-9a-fA-F]{40}$/.test(owner)) {
    throw new NodeError('config_invalid', {
      detail: '--owner: the owner wallet address (0x and 40 hex digits).',
    });
  }
  const [{ nodeLinkText }, { nodeKeyPath }, { loadNodeIdentity }] = await Promise.all([
    import('@gpumesh/protocol'),
    import('./daemon.js'),
    import('./identity.js'),
  ]);
  const identity = await loadNodeIdentity(nodeKeyPath(config));
  const nodeSignature = await identity.account.signMessage({ message: nodeLinkText(identity.nodeId, owner) });
  if (json) {
    console.log(JSON.stringify({ nodeId: identity.nodeId, owner: owner.toLowerCase(), nodeSignature }));
    return 0;
  }
  console.log(`node      ${identity.nodeId}\nowner     ${owner.toLowerCase()}\nsignature ${nodeSignature}`);
  console.error(
    '\nSigned in with the owner wallet, paste the signature into the dashboard (or POST /api/provider/nodes/link).',
  );
  return 0;
}

/** What the running daemon's health endpoint says (health.ts), on this machine. */
async function status(config: NodeConfig, json: boolean): Promise<number> {
  const host = config.healthHost.includes(':') ? `[${config.healthHost}]` : config.healthHost;
  const url = `http://${host}:${config.healthPort}/health`;
  let body: Record<string, unknown>;
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
    body = (await res.json()) as Record<string, unknown>;
  } catch {
    const message = `the node is not running (no answer at ${url}; --health-port names another port)`;
    if (json) console.log(JSON.stringify({ running: false, online: false, error: message }));
    else console.error(`gpumesh-node: ${message}`);
    return 1;
  }
  const online = body.hubConnected === true && body.presence === 'online';
  const network = await coordinatorFigures(config, String(body.nodeId));
  if (json) {
    console.log(JSON.stringify({ running: true, online, ...body, ...(network ? { network } : {}) }));
    return online ? 0 : 1;
  }
  const tokens = body.tokensServed as { prompt: number; completion: number } | undefined;
  const earnings = body.estimatedEarnings as
    | { currency: string; amount: string; unit: string; usd?: number }
    | undefined;
  console.log(
    table([
      ['node', String(body.nodeId)],
      ['coordinator', body.hubConnected === true ? 'connected' : 'not connected'],
      ['presence', String(body.presence)],
      ['tier', String(body.tierSummary ?? 'not admitted yet')],
      ['jobs', `${body.jobsInFlight} running of ${body.capacity}; ${body.jobsServed} served`],
      ['tokens', `${tokens?.prompt ?? 0} prompt, ${tokens?.completion ?? 0} completion`],
      [
        'earnings',
        earnings?.usd !== undefined
          ? `$${earnings.usd.toFixed(6)} since start (estimated from its prices; the coordinator's ledger is authoritative)`
          : `${earnings?.amount ?? '0'} ${earnings?.unit ?? 'wei'} since start (estimated)`,
      ],
      [
        'earned in total',
        network
          ? `$${network.earnings.total.toFixed(6)} (USD, the coordinator's ledger${network.linked ? ', credited to the owner' : ', credited to this node until it is linked'}); uptime ${(network.uptime.last24h * 100).toFixed(1)}% over 24 h (or since first seen)`
          : 'unknown (the coordinator did not answer)',
      ],
    ]),
  );
  return online ? 0 : 1;
}

type NetworkFigures = {
  linked: boolean;
  jobs: number;
  earnings: { total: number; today: number; unit: 'USD' };
  uptime: { last24h: number };
};

/** The coordinator's public figures for this node (GET /api/network/nodes/:id), or undefined. */
async function coordinatorFigures(config: NodeConfig, nodeId: string): Promise<NetworkFigures | undefined> {
  const first = (config.coordinator.split(',')[0] ?? '').trim().replace(/^ws(s?):/, 'http$1:');
  try {
    const base = new URL(first);
    const res = await fetch(new URL(`/api/network/nodes/${nodeId}`, base.origin), {
      signal: AbortSignal.timeout(3_000),
    });
    return res.ok ? ((await res.json()) as NetworkFigures) : undefined;
  } catch {
    return undefined;
  }
}

async function doctor(config: NodeConfig, json: boolean): Promise<number> {
  const { runDoctor } = await import('./doctor.js');
  const checks = await runDoctor(config);
  const ok = checks.every((check) => check.ok);
  if (json) {
    console.log(JSON.stringify({ ok, checks }));
    return ok ? 0 : 1;
  }
  for (const check of checks) {
    console.log(
      `${check.ok ? 'ok  ' : 'FAIL'}  ${check.name}: ${check.detail}${check.ok ? '' : `\n      fix: ${check.fix}`}`,
    );
  }
  return checks.every((check) => check.ok) ? 0 : 1;
}

async function models(config: NodeConfig, json: boolean): Promise<number> {
  if (config.runtime === 'openai' && json) {
    console.log(JSON.stringify({ runtime: 'openai', openaiUrl: config.openaiUrl, models: [] }));
    return 0;
  }
  if (config.runtime === 'openai') {
    console.log(`Models come from ${config.openaiUrl}; run doctor to list them.`);
    return 0;
  }
  const { listLocalModels } = await import('./runtimes/local-models.js');
  const local = await listLocalModels(config);
  if (json) {
    console.log(
      JSON.stringify({
        modelsDir: config.modelsDir,
        models: local.map(({ file, path, sha256, id, embeddingId, family, maxConcurrency, price }) => ({
          file,
          path,
          sha256,
          id,
          family: family ?? 'chat',
          ...(embeddingId ? { embeddingId } : {}),
          maxConcurrency,
          price,
        })),
      }),
    );
    return 0;
  }
  if (local.length === 0) {
    console.log(`No .gguf files in ${config.modelsDir}.`);
    return 0;
  }
  // USD prices as dollars (the config's unit is nanousd); native ones in whole tokens.
  const unit = (base: string, currency: string) =>
    currency === 'USD' ? `$${(Number(base) / 1e9).toFixed(4)}` : `${(Number(base) / 1e18).toFixed(6)} native`;
  const price = (p: { currency: string; inputPerMTok: string; outputPerMTok: string }) =>
    `${unit(p.inputPerMTok, p.currency)} in / ${unit(p.outputPerMTok, p.currency)} out per M tokens`;
  const rows = [['FILE', 'SHA-256', 'OFFERED AS', 'CONCURRENCY', 'PRICE']];
  for (const model of local) {
    rows.push([
      model.file,
      `${model.sha256?.slice(0, 12) ?? '?'}…`,
      `${model.id} (${model.family ?? 'chat'})`,
      String(model.maxConcurrency),
      price(model.price),
    ]);
    if (model.embeddingId)
      rows.push([
        '',
        '',
        `${model.embeddingId} (embedding)`,
        String(model.maxConcurrency),
        price(model.embeddingPrice),
      ]);
  }
  console.log(table(rows));
  return 0;
}

async function pull(
  config: NodeConfig,
  ref: string | undefined,
  values: { json?: boolean | undefined; sha256?: string | undefined },
): Promise<number> {
  if (!ref) {
    console.error(`models pull needs a model reference.\n\n${USAGE}`);
    return 2;
  }
  if (values.sha256 !== undefined && !/^[0-9a-fA-F]{64}$/.test(values.sha256)) {
    throw new NodeError('config_invalid', { detail: '--sha256: expected 64 hex digits.' });
  }
  const { pullModel } = await import('./models/pull-model.js');
  const catalog = await fetchCatalog(config.coordinator);
  if (!catalog)
    console.error(`warning: the coordinator's catalog could not be read; the file is not verified.`);
  const tty = process.stderr.isTTY === true && values.json !== true;
  let shownStep = -1;
  const result = await pullModel({
    ref,
    modelsDir: config.modelsDir,
    ...(catalog ? { catalog } : {}),
    ...(values.sha256 ? { sha256: values.sha256 } : {}),
    showCliProgress: tty,
    onProgress: ({ downloadedBytes, totalBytes, bytesPerSecond, etaS }) => {
      if (tty || totalBytes <= 0) return;
      const step = Math.floor((downloadedBytes / totalBytes) * 10);
      if (step === shownStep) return;
      shownStep = step;
      const mib = (bytes: number) => `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
      console.error(
        `pulling ${ref}: ${step * 10}% (${mib(downloadedBytes)} of ${mib(totalBytes)}, ${mib(bytesPerSecond)}/s, about ${Math.ceil(etaS / 1000)} s left)`,
      );
    },
  });
  if (values.json) {
    console.log(JSON.stringify(result));
    return 0;
  }
  console.log(`${result.path}\nsha256 ${result.sha256}`);
  console.log(
    result.verified === 'catalog'
      ? `verified against the catalog: served as ${result.modelId}`
      : result.verified === 'pinned'
        ? 'verified against --sha256'
        : 'not in the catalog: served under this node\u2019s own id (<nodeId>/<name>), unverified',
  );
  return 0;
}

/** A model file in the models folder, by its name (never a path elsewhere). */
function modelFile(config: NodeConfig, file: string | undefined): string {
  if (!file || file !== basename(file) || !file.endsWith('.gguf')) {
    throw new NodeError('config_invalid', { detail: `expected a .gguf file name in ${config.modelsDir}.` });
  }
  return join(config.modelsDir, file);
}

async function info(config: NodeConfig, file: string | undefined, json: boolean): Promise<number> {
  const path = modelFile(config, file);
  const [{ modelInfo }, { detectHardware }] = await Promise.all([
    import('./models/model-info.js'),
    import('./hardware/detect-hardware.js'),
  ]);
  const model = await modelInfo(path, await detectHardware()).catch((error: unknown) => {
    throw new NodeError('model_load_failed', {
      detail: `${path}: ${(error as Error).message}`,
      cause: error,
    });
  });
  if (json) {
    console.log(JSON.stringify(model));
    return 0;
  }
  const gib = (bytes: number) => `${(bytes / 1024 ** 3).toFixed(2)} GiB`;
  const count = (n: number) => (n >= 1e9 ? `${(n / 1e9).toFixed(2)} B` : `${(n / 1e6).toFixed(2)} M`);
  console.log(
    table([
      ['file', `${model.file} (${gib(model.sizeBytes)})`],
      [
        'model',
        `${model.architecture}, ${model.quantization}, ${count(model.parameters)} parameters, ${model.layers} layers`,
      ],
      ['context', `${model.trainedContext ?? '?'} tokens trained; estimates for ${model.contextTokens}`],
      ['on the GPU', gib(model.gpuBytes)],
      ['on the CPU', gib(model.cpuBytes)],
      [
        'fits',
        model.fits === 'gpu' ? 'on this GPU' : model.fits === 'cpu' ? 'in RAM (CPU)' : 'not on this machine',
      ],
    ]),
  );
  return 0;
}

async function removeModel(config: NodeConfig, file: string | undefined): Promise<number> {
  const path = modelFile(config, file);
  const { rm } = await import('node:fs/promises');
  await rm(path).catch((error: unknown) => {
    throw new NodeError('config_invalid', { detail: `${path}: ${(error as Error).message}`, cause: error });
  });
  console.log(`removed ${path}`);
  return 0;
}

/**
 * The catalog's files that fit this machine, smallest first: a file fits the GPU when its size plus
 * a fifth (context and buffers) is within the most free VRAM of one GPU, the CPU when within 80 % of RAM.
 */
async function recommend(config: NodeConfig, json: boolean): Promise<number> {
  const { detectHardware } = await import('./hardware/detect-hardware.js');
  const [catalog, hardware] = await Promise.all([fetchCatalogModels(config.coordinator), detectHardware()]);
  if (!catalog)
    throw new NodeError('model_download_failed', { detail: "the coordinator's catalog could not be read." });
  const freeVram = Math.max(0, ...hardware.gpus.map((gpu) => gpu.vramFreeBytes));
  const fitting = catalog
    .flatMap((model) =>
      model.files.map((file) => {
        const need = file.sizeBytes * 1.2;
        const fits = freeVram >= need ? 'gpu' : hardware.ramBytes * 0.8 >= need ? 'cpu' : 'no';
        return {
          modelId: model.id,
          family: model.family,
          quant: file.quant,
          file: file.file,
          sizeBytes: file.sizeBytes,
          fits,
        };
      }),
    )
    .filter((file) => file.fits !== 'no')
    .sort((a, b) => a.sizeBytes - b.sizeBytes);
  if (json) {
    console.log(JSON.stringify({ freeVramBytes: freeVram, ramBytes: hardware.ramBytes, models: fitting }));
    return 0;
  }
  const mib = (bytes: number) => `${(bytes / 1024 ** 2).toFixed(0)} MiB`;
  console.log(
    table([
      ['MODEL', 'QUANT', 'SIZE', 'FITS', 'FILE'],
      ...fitting.map((f) => [
        f.modelId,
        f.quant,
        mib(f.sizeBytes),
        f.fits === 'gpu' ? 'GPU' : 'CPU (RAM)',
        f.file,
      ]),
    ]),
  );
  return 0;
}

type CatalogModels = {
  id: string;
  family: string;
  files: { quant: string; file: string; sizeBytes: number; sha256: string }[];
}[];

/** The coordinator's catalog files (GET /api/models/catalog), or undefined when it can't be read. */
async function fetchCatalog(
  coordinator: string,
): Promise<{ modelId: string; file: string; sha256: string }[] | undefined> {
  const models = await fetchCatalogModels(coordinator);
  return models?.flatMap((model) =>
    model.files.map((file) => ({ modelId: model.id, file: file.file, sha256: file.sha256 })),
  );
}

/** The coordinator's catalog (GET /api/models/catalog on its app URL), or undefined. */
async function fetchCatalogModels(coordinator: string): Promise<CatalogModels | undefined> {
  const url = new URL(coordinator.split(',')[0]!.trim());
  url.protocol = url.protocol === 'wss:' || url.protocol === 'https:' ? 'https:' : 'http:';
  url.pathname = '/api/models/catalog';
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
    if (!res.ok) return undefined;
    return ((await res.json()) as { models: CatalogModels }).models;
  } catch {
    return undefined;
  }
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length)));
  return rows
    .map((row) =>
      row
        .map((cell, column) => cell.padEnd(widths[column]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
