import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** Whether the coordinator serves the node package install.sh installs (`GET /install/packages.json`). */
export type PackageServed = { ok: true; installUrl: string } | { ok: false; reason: string };

/**
 * Packs the node package install.sh installs into `packagesDir`, in a child process (about 20 s;
 * until then the coordinator's /install/packages.json answers 503 with Retry-After). `servedBy`
 * settles once the coordinator at `appUrl` serves it, or with why it never will; `stop` kills the
 * packer if it still runs.
 */
export function packNodePackage(packagesDir: string): {
  servedBy(appUrl: string): Promise<PackageServed>;
  stop(): Promise<void>;
} {
  const packing = spawn(
    process.execPath,
    [fileURLToPath(new URL('./pack-node-packages.mjs', import.meta.url)), packagesDir],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let packingErrors = '';
  packing.stderr?.on('data', (chunk: Buffer) => {
    packingErrors = (packingErrors + chunk.toString()).slice(-2000);
  });
  // The packer's exit is the event that decides: no deadline, a loaded machine packs slower.
  const packed = new Promise<number | NodeJS.Signals | null>((resolve) => {
    packing.once('exit', (code, signal) => resolve(code ?? signal));
    packing.once('error', () => resolve(null));
  });
  return {
    servedBy: (appUrl) =>
      packed.then(async (how): Promise<PackageServed> => {
        if (how !== 0) {
          const why = packingErrors.trim().split('\n').slice(-5).join('\n');
          return {
            ok: false,
            reason: `packing it failed (${how ?? 'did not start'})${why ? `:\n${why}` : ''}`,
          };
        }
        const listed = await fetch(`${appUrl}/install/packages.json`).catch((error: Error) => error);
        if (listed instanceof Error)
          return { ok: false, reason: `${appUrl} did not answer: ${listed.message}` };
        if (listed.status !== 200)
          return { ok: false, reason: `/install/packages.json answers ${listed.status}` };
        return { ok: true, installUrl: `${appUrl}/install.sh` };
      }),
    stop: async () => {
      if (packing.exitCode === null) packing.kill();
    },
  };
}
