/**
 * What the load benchmarks share: autocannon in a process of its own (so the measured servers'
 * threads carry none of the load generator's CPU), and the fixed-reply node in a process of its own.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import type { Result as AutocannonResult } from 'autocannon';

export type AutocannonRun = {
  url: string;
  headers: Record<string, string>;
  body: string;
  connections: number;
  durationS: number;
};

/** One autocannon run of POSTs (bench/autocannon-process.ts), with the CPU its process used, µs. */
export async function autocannonLoad(run: AutocannonRun): Promise<AutocannonResult & { cpuMicros: number }> {
  const options = {
    url: run.url,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...run.headers },
    body: run.body,
    connections: run.connections,
    duration: run.durationS,
  };
  const child = spawn(
    process.execPath,
    [
      '--conditions=gpumesh-source',
      '--import',
      'tsx',
      new URL('./autocannon-process.ts', import.meta.url).pathname,
      JSON.stringify(options),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (text: string) => {
    output += text;
  });
  const [code] = await once(child, 'exit');
  if (code !== 0) throw new Error(`the load generator exited with ${code}`);
  return JSON.parse(output) as AutocannonResult & { cpuMicros: number };
}

/**
 * A process of this package's (`script`, relative to bench/) started with tsx; resolves once it
 * printed `marker`, with the child and everything it printed by then.
 */
export async function spawnReady(
  script: string,
  args: readonly string[],
  marker = 'ready',
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ child: ChildProcess; output: string }> {
  const child = spawn(
    process.execPath,
    ['--conditions=gpumesh-source', '--import', 'tsx', new URL(script, import.meta.url).pathname, ...args],
    { stdio: ['ignore', 'pipe', 'inherit'], env },
  );
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (text: string) => {
    output += text;
  });
  while (!output.includes(marker)) {
    if (child.exitCode !== null) throw new Error(`${script} exited with ${child.exitCode}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return { child, output };
}

/** A fixed-reply node in its own process; resolves once the coordinator acknowledged it. */
export async function spawnFixedReplyNode(
  url: string,
  ownerKey: string,
  model = 'bench',
): Promise<ChildProcess> {
  return (await spawnReady('./fixed-reply-node-process.ts', [url, ownerKey, model])).child;
}

/** SIGTERM, and the exit. */
export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  child.kill('SIGTERM');
  await once(child, 'exit');
}
