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
  child: ChildProcess;
  send(command: FleetCommand): void;
  /** Resolves with the next event of this name. */
  next(event: string): Promise<Record<string, unknown>>;
};

export function startFleet(settings: FleetSettings): Fleet {
  const waiters = new Map<string, ((e: Record<string, unknown>) => void)[]>();
  const child = start('./sim-fleet-process.ts', JSON.stringify(settings), [], (line) => {
    const event = JSON.parse(line) as Record<string, unknown>;
    const name = String(event.event === 'done' ? `done:${event.cmd}` : event.event);
    if (name === 'keys' && !event.ready && Number(event.made) % 5000 === 0) log(`  keys made: ${event.made}`);
    if (name === 'progress' && Number(event.ready) % 5000 === 0) log(`  nodes ready: ${event.ready}`);
    for (const resolve of waiters.get(name)?.splice(0) ?? []) resolve(event);
  });
  return {
    child,
    send: (command) => child.stdin!.write(`${JSON.stringify(command)}\n`),
    next: (name) =>
      new Promise((resolve) => {
        const list = waiters.get(name) ?? [];
        list.push(resolve);
        waiters.set(name, list);
      }),
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
