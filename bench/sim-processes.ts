/**
 * The processes bench/network-sim.ts starts and talks to: coordinator replicas (replica-process.ts,
 * with an IPC channel for probes) and the fleet of simulated nodes (sim-fleet-process.ts, commanded
 * on stdin, its events read from stdout).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import type { ProbeRequest } from './replica-probe.js';
import type { ReplicaSettings } from './replica-process.js';
import type { FleetCommand, FleetSettings } from './sim-fleet-process.js';

const log = (text: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${text}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Every child process started and not yet exited. */
export const children = new Set<ChildProcess>();

export type Replica = { base: string; hubUrl: string; child: ChildProcess; pid: number };

/** A child process running one of this folder's scripts; lines of its stdout go to `onLine`. */
function start(
  script: string,
  arg: string,
  nodeFlags: string[],
  onLine: (line: string) => void,
): ChildProcess {
  const child = spawn(
    process.execPath,
    [
      ...nodeFlags,
      '--conditions=gpumesh-source',
      '--import',
      'tsx',
      new URL(script, import.meta.url).pathname,
      arg,
    ],
    { stdio: ['pipe', 'pipe', 'inherit', 'ipc'] },
  );
  children.add(child);
  child.once('exit', () => children.delete(child));
  let buffered = '';
  child.stdout!.setEncoding('utf8').on('data', (text: string) => {
    buffered += text;
    let at = buffered.indexOf('\n');
    while (at >= 0) {
      onLine(buffered.slice(0, at));
      buffered = buffered.slice(at + 1);
      at = buffered.indexOf('\n');
    }
  });
  return child;
}

export async function startReplica(settings: ReplicaSettings): Promise<Replica> {
  let info: { base: string; hubUrl: string } | undefined;
  const child = start('./replica-process.ts', JSON.stringify(settings), ['--expose-gc'], (line) => {
    if (line.includes('"ready"')) info = JSON.parse(line) as typeof info;
  });
  while (!info) {
    if (child.exitCode !== null) throw new Error('a replica exited before it was ready');
    await sleep(50);
  }
  return { ...info, child, pid: child.pid! };
}

/** Asks a replica a probe (replica-probe.ts) and waits for its answer. */
export async function probe<T>(replica: Replica, request: ProbeRequest): Promise<T> {
  replica.child.send(request);
  const [answer] = (await once(replica.child, 'message')) as [T];
  return answer;
}

export type Fleet = {
  children: ChildProcess[];
  /** To every process of the fleet; a churn or presence rate is shared among them. */
  send(command: FleetCommand): void;
  /** Resolves once every process sent its next event of this name: their numbers summed. */
  next(event: string): Promise<Record<string, unknown>>;
};

/** Numbers summed, objects of numbers summed by key, anything else the first's. */
function merge(events: Record<string, unknown>[]): Record<string, unknown> {
  const out: Record<string, unknown> = { ...events[0] };
  for (const event of events.slice(1)) {
    for (const [key, value] of Object.entries(event)) {
      if (typeof value === 'number') out[key] = Number(out[key] ?? 0) + value;
      else if (value && typeof value === 'object')
        out[key] = merge([out[key] as Record<string, unknown>, value as Record<string, unknown>]);
    }
  }
  return out;
}

/**
 * The simulated nodes in `processes` processes (a process holds one socket per node, and this
 * machine allows 20,000 files a process): process i runs nodes i·n/processes … and connects them
 * to urls[i % urls.length].
 */
export function startFleet(settings: FleetSettings, processes: number): Fleet {
  const per = Math.ceil(settings.nodes / processes);
  const parts = Array.from({ length: processes }, (_, i) => {
    const waiters = new Map<string, ((e: Record<string, unknown>) => void)[]>();
    const part: FleetSettings = {
      ...settings,
      first: i * per,
      nodes: Math.min(per, settings.nodes - i * per),
      urls: [settings.urls[i % settings.urls.length]!],
    };
    const child = start('./sim-fleet-process.ts', JSON.stringify(part), [], (line) => {
      const event = JSON.parse(line) as Record<string, unknown>;
      const name = String(event.event === 'done' ? `done:${event.cmd}` : event.event);
      if (name === 'keys' && !event.ready && Number(event.made) % 5000 === 0)
        log(`  keys made: ${event.made}`);
      if (name === 'progress' && Number(event.ready) % 5000 === 0)
        log(`  nodes ready (process ${i}): ${event.ready}`);
      for (const resolve of waiters.get(name)?.splice(0) ?? []) resolve(event);
    });
    const next = (name: string) =>
      new Promise<Record<string, unknown>>((resolve) => {
        const list = waiters.get(name) ?? [];
        list.push(resolve);
        waiters.set(name, list);
      });
    return { child, next };
  });
  return {
    children: parts.map((p) => p.child),
    send: (command) => {
      const shared = 'rate' in command ? { ...command, rate: command.rate / processes } : command;
      for (const { child } of parts) child.stdin!.write(`${JSON.stringify(shared)}\n`);
    },
    next: async (name) => merge(await Promise.all(parts.map((p) => p.next(name)))),
  };
}

/** SIGTERM, and SIGKILL if it has not exited 15 s later. */
export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await once(child, 'exit');
  clearTimeout(timer);
}
