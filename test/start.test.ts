/**
 * The README's first command, as a newcomer runs it: `npm start` brings up the devnet, the
 * coordinator and a real node on the generated model; the curl example it prints works when pasted
 * into a shell; Ctrl-C stops every process it started; a second start keeps the key and balance.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { writeTinyModel } from '@gpumesh/node';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..');
const START_TIMEOUT_MS = 150_000;
/** Ctrl-C lets nodes finish their jobs and the chain save its state before everything is gone. */
const STOP_TIMEOUT_MS = 30_000;
const run = promisify(execFile);

type Started = { child: ChildProcess; output: () => string };

/** Every npm start of this file, so a failed test still leaves no process behind. */
const startedGroups: number[] = [];

function npmStart(args: string[]): Promise<Started> {
  // Its own process group, like a terminal's foreground job: Ctrl-C signals the whole group.
  const child = spawn('npm', ['start', '--silent', '--', ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  startedGroups.push(child.pid!);
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`npm start did not come up:\n${output}`)),
      START_TIMEOUT_MS,
    );
    const poll = setInterval(() => {
      if (output.includes('Press Ctrl-C to stop.')) done();
    }, 100);
    child.once('exit', (code) => done(new Error(`npm start exited with ${code}:\n${output}`)));
    function done(error?: Error): void {
      clearTimeout(timer);
      clearInterval(poll);
      if (error) reject(error);
      else resolve({ child, output: () => output });
    }
  });
}

const SIGNAL_NUMBERS: Partial<Record<NodeJS.Signals, number>> = { SIGINT: 2, SIGTERM: 15 };

/**
 * Signals the whole process group, as Ctrl-C in a terminal (SIGINT) or a service manager (SIGTERM)
 * does, and resolves with the exit status a shell would report (128 + signal when killed by it).
 */
function stopWith(started: Started, signal: NodeJS.Signals): Promise<number> {
  const { child } = started;
  const status = () => child.exitCode ?? 128 + (SIGNAL_NUMBERS[child.signalCode as NodeJS.Signals] ?? 0);
  if (child.exitCode !== null || child.signalCode !== null) {
    throw new Error(`npm start had already exited (${status()}):\n${started.output()}`);
  }
  return new Promise((resolve) => {
    child.once('exit', () => resolve(status()));
    execFile('kill', [`-${signal.slice(3)}`, '--', `-${child.pid}`], (error, _out, stderr) => {
      if (error) throw new Error(`kill -${signal} -${child.pid}: ${stderr}\n${started.output()}`);
    });
  });
}

/** The printed curl example, exactly as a user would copy it (the lines after "Try it (curl):"). */
function printedCurl(output: string): string {
  const lines = output.split('\n');
  const start = lines.findIndex((l) => l.startsWith('Try it (curl):'));
  const block: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (line.trim() === '') break;
    block.push(line);
  }
  return block.join('\n');
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

async function processesUnder(dataDir: string): Promise<string[]> {
  const { stdout } = await run('ps', ['-eo', 'args']).catch(() => ({ stdout: '' }));
  return stdout.split('\n').filter((l) => l.includes(dataDir) && !l.includes('ps -eo'));
}

// The whole network runs on its default store (SQLite in the data directory), as `npm start` does.

describe('npm start', () => {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const group of startedGroups) {
      try {
        process.kill(-group, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('behavior: --help prints the flags (npm start, npm run demo), ending with a newline, and starts nothing', async () => {
    const { stdout } = await run('npm', ['start', '--silent', '--', '--help'], { cwd: ROOT });
    expect(stdout).toMatch(/^usage: npm start -- /);
    expect(stdout).toContain('--data-dir DIR');
    expect(stdout.endsWith('\n')).toBe(true);
    const refused = await run('npm', ['start', '--silent', '--', '--bogus'], { cwd: ROOT }).then(
      () => undefined,
      (error: { code: number; stderr: string }) => error,
    );
    expect(refused?.code).toBe(2);
    expect(refused?.stderr).toMatch(/^npm start: Unknown option '--bogus'/);
    expect(refused?.stderr).not.toContain('    at ');
    const demo = await run('npm', ['run', 'demo', '--silent', '--', '--help'], { cwd: ROOT });
    expect(demo.stdout).toMatch(/^usage: npm run demo -- \[--network /);
    expect(demo.stdout.endsWith('\n')).toBe(true);
    // Three npm runs of a few seconds each, longer on a loaded machine: load is not failure.
  }, 180_000);

  it(
    'default: the printed curl example works; Ctrl-C stops everything; a restart keeps the key',
    async () => {
      const dataDir = await mkdtemp(path.join(tmpdir(), 'gpumesh-start-'));
      dirs.push(dataDir);
      const args = [
        '--data-dir',
        dataDir,
        '--port',
        String(await freePort()),
        '--rpc-port',
        String(await freePort()),
      ];

      const first = await npmStart(args);
      const curl = printedCurl(first.output());
      expect(curl).toMatch(/^ {2}curl -s http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions/);
      const { stdout } = await run('bash', ['-c', curl]);
      const reply = JSON.parse(stdout) as {
        choices: { message: { content: string }; finish_reason: string }[];
        usage: { prompt_tokens: number; completion_tokens: number; cost: number };
      };
      // npm start's default model answers the printed question, whole (a max_tokens of 32 once cut
      // its worked columns off before the sum).
      expect(reply.choices[0]!.message.content).toMatch(/= 42\.$/);
      expect(reply.choices[0]!.finish_reason).toBe('stop');
      expect(reply.usage.prompt_tokens).toBeGreaterThan(0);
      expect(reply.usage.cost).toBeGreaterThan(0);
      // The coordinator's verifier holds every pinned file of the model, the nodes only the served one.
      expect((await readdir(path.join(dataDir, 'verifier-models'))).sort()).toEqual([
        'gpumesh-mini-chat-F16.gguf',
        'gpumesh-mini-chat-Q4_0.gguf',
        'gpumesh-mini-chat-Q8_0.gguf',
      ]);
      expect((await readdir(path.join(dataDir, 'models'))).filter((f) => f.endsWith('.gguf'))).toEqual([
        'gpumesh-mini-chat-F16.gguf',
      ]);
      const key = /API key {6}(sk-\S+)/.exec(first.output())?.[1];
      expect(key).toBeDefined();
      // The nodes belong to the dev wallet, staked.
      expect(first.output()).toMatch(/owner {5}0x[0-9a-fA-F]{40} \(dev wallet, staked/);
      // Each node's start is shown as it goes (npm start waits on progress, not a deadline).
      expect(first.output()).toMatch(/node 0 {4}model loaded; connecting to the coordinator/);
      expect(first.output()).toMatch(/node 0 {4}admitted by the coordinator/);

      // A burst the one local node cannot take at once waits its turn: 64 parallel streams, all 200.
      const endpoint = /curl -s (http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions)/.exec(curl)![1]!;
      const model = /"model": ?"([^"]+)"/.exec(curl)?.[1] ?? 'gpumesh/tiny-chat';
      const streams = await Promise.all(
        Array.from({ length: 64 }, async () => {
          const res = await fetch(endpoint, {
            method: 'POST',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            body: JSON.stringify({
              model,
              messages: [{ role: 'user', content: 'hi' }],
              max_tokens: 8,
              stream: true,
            }),
          });
          const body = await res.text();
          return res.status === 200 && body.trimEnd().endsWith('data: [DONE]') ? 200 : res.status;
        }),
      );
      expect(streams).toEqual(Array(64).fill(200));

      // A node that dies is started again, without a manual step.
      const nodeArgs = async () => (await processesUnder(dataDir)).filter((l) => l.includes('gpumesh-node'));
      const [nodeLine] = await nodeArgs();
      expect(nodeLine).toBeDefined();
      const { stdout: pids } = await run('pgrep', ['-f', `${dataDir}/nodes/0/config.json`]);
      const pid = Number(pids.trim().split('\n')[0]);
      process.kill(pid, 'SIGKILL');
      await expect
        .poll(async () => first.output().includes('node 0   exited (SIGKILL); restarting'), {
          timeout: 10_000,
        })
        .toBe(true);
      await expect
        .poll(
          async () =>
            (await run('bash', ['-c', curl]).catch(() => ({ stdout: '' }))).stdout.includes('"cost"'),
          {
            timeout: 60_000,
            interval: 500,
          },
        )
        .toBe(true);

      // install.sh's package, packed by npm start in the background: the install command is
      // printed once it is served (waited on as printed; the deadline is only a safety net), and
      // from that moment the package answers 200 with its hashes.
      const appUrl = new URL(endpoint).origin;
      await expect
        .poll(() => first.output().includes('Add a provider node'), { timeout: 300_000, interval: 200 })
        .toBe(true);
      expect(first.output()).toContain(
        `  curl -fsSL ${appUrl}/install.sh | sh -s -- --role cpu --coordinator ${appUrl}`,
      );
      const listed = await fetch(`${appUrl}/install/packages.json`);
      expect(listed.status).toBe(200);
      const { packages } = (await listed.json()) as { packages: { file: string; sha256: string }[] };
      expect(packages.map((p) => p.file)).toEqual([
        expect.stringMatching(/^gpumesh-protocol-/),
        expect.stringMatching(/^gpumesh-node-/),
      ]);

      expect(await stopWith(first, 'SIGINT')).toBe(130);
      await expect.poll(() => processesUnder(dataDir), { timeout: STOP_TIMEOUT_MS }).toEqual([]);

      // Restarted with --model: a GGUF pulled over HTTP (one the catalog does not know) is served
      // under the node's own scope, and the printed example names it.
      const weights = path.join(dataDir, 'mine.gguf');
      await writeTinyModel({ path: weights, seed: 7 });
      const files = http.createServer((_req, res) => createReadStream(weights).pipe(res.writeHead(200)));
      await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
      const modelUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}/models/mine.gguf`;
      const second = await npmStart([...args, '--model', modelUrl]);
      files.close();
      expect(/API key {6}(sk-\S+)/.exec(second.output())?.[1]).toBe(key);
      expect(second.output()).toContain('not in the catalog: unverified');
      const pulledCurl = printedCurl(second.output());
      expect(pulledCurl).toMatch(/"model":"0x[0-9a-f]{40}\/mine"/);
      const again = JSON.parse((await run('bash', ['-c', pulledCurl])).stdout) as {
        usage: { cost: number };
      };
      expect(again.usage.cost).toBeGreaterThan(0);
      expect(await stopWith(second, 'SIGTERM')).toBe(143);
      await expect.poll(() => processesUnder(dataDir), { timeout: STOP_TIMEOUT_MS }).toEqual([]);
    },
    4 * START_TIMEOUT_MS,
  );
});

describe('npm run demo', () => {
  it(
    'default: every step passes against its own network',
    async () => {
      const { stdout } = await run('npm', ['run', 'demo', '--silent'], {
        cwd: ROOT,
        timeout: 3 * START_TIMEOUT_MS,
      });
      for (const step of [
        '[1] Sign in',
        '[2] Create',
        '[3] Send',
        '[4] Chat',
        '[5] Usage',
        '[6] Stake',
        '[7] Read',
      ])
        expect(stdout).toContain(step);
      expect(stdout).toContain('demo: every step passed.');
    },
    3 * START_TIMEOUT_MS,
  );
});
