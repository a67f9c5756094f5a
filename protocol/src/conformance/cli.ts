import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { buildKitModel, sha256Hex } from '../kit-model/kit-model.js';
import { runCoordinatorConformance } from './coordinator/run-coordinator-conformance.js';
import { runNodeConformance } from './node/run-node-conformance.js';
import { openAiTrigger } from './open-ai-trigger.js';
import { startReferenceCoordinator } from './reference/reference-coordinator.js';
import { startReferenceNode } from './reference/reference-node.js';
import { type ConformanceReport, formatReport, type ScenarioResult } from './report.js';

const USAGE = `Usage:
  gpumesh-conformance node --listen <port> [--host 127.0.0.1] [--heartbeat-ms 200] [options]
      Plays the coordinator. Point the node under test at ws://<host>:<port>; it must reconnect
      after each scenario.
  gpumesh-conformance coordinator --url <ws-url> [--api-url <http-url>/v1 --api-key <key>] [options]
      Plays a node against the coordinator at <ws-url>. With --api-url and --api-key the kit sends
      client requests there to check that jobs reach it (scenario "jobs"; skipped otherwise).
      --chat-model / --embedding-model name the models the kit's node advertises.
  gpumesh-conformance kit-model --out <file>
      Writes the kit model (a generated GGUF, the same bytes everywhere) and prints its sha256. A
      node that serves it under scope verify runs the verify scenarios.
  gpumesh-conformance reference-node --url <ws-url> [--breaks <scenario>]
  gpumesh-conformance reference-coordinator --listen <port> [--heartbeat-ms 10000] [--breaks <scenario>]
      Run the reference peers (examples of a correct node and coordinator) until interrupted;
      --breaks makes them violate one scenario's rule, to see the kit catch it.
Options:
  --json                 print the report as JSON
  --scenario <name>      run only this scenario (repeatable)
  --step-timeout-ms <n>  wait for each expected frame (default 5000)
  --job-timeout-ms <n>   wait for each job (default 30000)
Exit status: 0 when no scenario failed, 1 when one did, 2 on a usage error.`;

function integer(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} must be a non-negative integer`);
  return n;
}

/** Runs the conformance CLI with `argv` (without node and script); resolves with the exit status. */
export async function main(
  argv: readonly string[],
  out: (line: string) => void = console.log,
): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    out(`${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`);
    return 2;
  }
  const { command, values } = parsed;
  if (values.help || !command) {
    out(USAGE);
    return values.help ? 0 : 2;
  }
  const progress = values.json
    ? undefined
    : (r: ScenarioResult) => out(`${r.status.toUpperCase().padEnd(4)} ${r.name}`);
  const common = {
    ...(values.scenario ? { scenarios: values.scenario } : {}),
    ...(values['step-timeout-ms']
      ? { stepTimeoutMs: integer(values['step-timeout-ms'], 'step-timeout-ms') }
      : {}),
    ...(values['job-timeout-ms']
      ? { jobTimeoutMs: integer(values['job-timeout-ms'], 'job-timeout-ms') }
      : {}),
    ...(progress ? { onResult: progress } : {}),
  };

  let report: ConformanceReport;
  if (command === 'node') {
    const port = integer(values.listen, 'listen');
    if (port === undefined) {
      out(`node needs --listen <port>\n\n${USAGE}`);
      return 2;
    }
    report = await runNodeConformance({
      ...common,
      port,
      host: values.host ?? '127.0.0.1',
      ...(values['heartbeat-ms']
        ? { heartbeatIntervalMs: integer(values['heartbeat-ms'], 'heartbeat-ms') }
        : {}),
      onListening: (url) => {
        if (!values.json) out(`listening on ${url}; start the node under test against it`);
      },
    });
  } else if (command === 'coordinator') {
    if (!values.url) {
      out(`coordinator needs --url <ws-url>\n\n${USAGE}`);
      return 2;
    }
    if (Boolean(values['api-url']) !== Boolean(values['api-key'])) {
      out(`--api-url and --api-key go together\n\n${USAGE}`);
      return 2;
    }
    report = await runCoordinatorConformance({
      ...common,
      url: values.url,
      ...(values['api-url'] && values['api-key']
        ? { trigger: openAiTrigger(values['api-url'], values['api-key']) }
        : {}),
      ...(values['chat-model'] ? { chatModel: values['chat-model'] } : {}),
      ...(values['embedding-model'] ? { embeddingModel: values['embedding-model'] } : {}),
    });
  } else if (command === 'kit-model') {
    if (!values.out) {
      out(`kit-model needs --out <file>\n\n${USAGE}`);
      return 2;
    }
    const bytes = buildKitModel();
    await mkdir(dirname(values.out), { recursive: true });
    await writeFile(values.out, bytes);
    out(`wrote ${values.out}: ${bytes.length} bytes, sha256 ${sha256Hex(bytes)}`);
    return 0;
  } else if (command === 'reference-node' || command === 'reference-coordinator') {
    return runReference(command, values, out);
  } else {
    out(`unknown command ${command}\n\n${USAGE}`);
    return 2;
  }
  out(values.json ? JSON.stringify(report, null, 2) : formatReport(report));
  return report.ok ? 0 : 1;
}

/** Runs a reference peer until SIGINT/SIGTERM. */
async function runReference(
  command: 'reference-node' | 'reference-coordinator',
  values: ReturnType<typeof parse>['values'],
  out: (line: string) => void,
): Promise<number> {
  const breaks = values.breaks ? { breaks: values.breaks } : {};
  let stop: () => Promise<void>;
  if (command === 'reference-node') {
    if (!values.url) {
      out(`reference-node needs --url <ws-url>\n\n${USAGE}`);
      return 2;
    }
    const node = startReferenceNode({ url: values.url, reconnectDelayMs: 100, ...breaks });
    out(`reference node ${node.nodeId} connecting to ${values.url}`);
    stop = () => node.stop();
  } else {
    const heartbeat = integer(values['heartbeat-ms'], 'heartbeat-ms');
    const coordinator = await startReferenceCoordinator({
      port: integer(values.listen, 'listen') ?? 0,
      host: values.host ?? '127.0.0.1',
      ...(heartbeat ? { heartbeatIntervalMs: heartbeat } : {}),
      ...breaks,
    });
    out(`reference coordinator listening on ${coordinator.url}`);
    stop = () => coordinator.close();
  }
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await stop();
  return signal === 'SIGINT' ? 130 : 143;
}

function parse(argv: readonly string[]) {
  const { positionals, values } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    options: {
      listen: { type: 'string' },
      host: { type: 'string' },
      url: { type: 'string' },
      out: { type: 'string' },
      'api-url': { type: 'string' },
      'api-key': { type: 'string' },
      'chat-model': { type: 'string' },
      'embedding-model': { type: 'string' },
      'heartbeat-ms': { type: 'string' },
      'step-timeout-ms': { type: 'string' },
      'job-timeout-ms': { type: 'string' },
      scenario: { type: 'string', multiple: true },
      breaks: { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  for (const name of ['listen', 'heartbeat-ms', 'step-timeout-ms', 'job-timeout-ms'] as const) {
    integer(values[name], name);
  }
  if (positionals.length > 1) throw new Error(`unexpected arguments: ${positionals.slice(1).join(' ')}`);
  return { command: positionals[0], values };
}
