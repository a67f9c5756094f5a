import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';

/** The Debian Chromium that .ci/run installs. */
export const CHROMIUM_PATH = process.env.GPUMESH_CHROMIUM_PATH || '/usr/bin/chromium';

/** Flags for a headless run on a machine without a display, sandbox user namespaces or internet. */
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-background-networking', '--disable-gpu', '--no-first-run'];

export type Chromium = {
  readonly context: BrowserContext;
  /** Closes the browser and deletes its profile. */
  close(): Promise<void>;
};

/** Starts headless Chromium on a new, empty profile (no state shared between tests or runs). */
export async function launchChromium(): Promise<Chromium> {
  const profile = mkdtempSync(join(tmpdir(), 'gpumesh-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 900 },
  });
  return {
    context,
    async close() {
      await context.close().catch(() => {});
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
