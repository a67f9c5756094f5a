import { spawn } from 'node:child_process';
import { NodeError } from '../../errors.js';

/** A finished engine process: its stdout and exit code. */
export type ProcessOutput = { stdout: Buffer; code: number | null };

/**
 * Runs an engine binary (argument list, never a shell) with `stdin`, collecting stdout; `onData`
 * sees stdout as it arrives. Aborting kills it and rejects with `job_cancelled`; a binary that is
 * missing rejects with `runtime_error`.
 */
export function runProcess(
  command: string,
  args: readonly string[],
  options: { stdin?: string | Buffer; signal?: AbortSignal; onData?: (data: Buffer) => void } = {},
): Promise<ProcessOutput> {
  return new Promise((resolve, reject) => {
    if (options.signal?.aborted) return reject(new NodeError('job_cancelled'));
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'ignore'] });
    const out: Buffer[] = [];
    const onAbort = () => child.kill('SIGKILL');
    options.signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout.on('data', (data: Buffer) => {
      out.push(data);
      options.onData?.(data);
    });
    child.on('error', (error) => {
      options.signal?.removeEventListener('abort', onAbort);
      reject(new NodeError('runtime_error', { detail: `${command} could not run.`, cause: error }));
    });
    child.on('close', (code) => {
      options.signal?.removeEventListener('abort', onAbort);
      if (options.signal?.aborted) return reject(new NodeError('job_cancelled'));
      resolve({ stdout: Buffer.concat(out), code });
    });
    child.stdin.on('error', () => {}); // the engine may exit before reading all of stdin
    child.stdin.end(options.stdin ?? '');
  });
}
