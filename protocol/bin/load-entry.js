// How the gpumesh commands (each package's bin/) start: from the TypeScript sources in a source
// checkout, from the compiled code everywhere else. Plain JavaScript, so it runs before tsx is there.
import { existsSync } from 'node:fs';
import { register } from 'node:module';

/**
 * Imports a package's entry module. In a source checkout (the package's src/ is there and tsx
 * resolves) that is src/<entry>.ts, run through tsx with the `gpumesh-source` export condition, so
 * no build is needed; otherwise dist/<entry>.js. A packed package ships no src/, so an installed one
 * always runs its compiled code.
 * @param {URL} packageUrl the package's folder, ending in `/`
 * @param {string} entry the module's path under src/ or dist/, without extension (e.g. `cli`)
 */
export async function loadEntry(packageUrl, entry) {
  if (existsSync(new URL('src/', packageUrl)) && (await registerSource())) {
    return import(new URL(`src/${entry}.ts`, packageUrl).href);
  }
  return import(new URL(`dist/${entry}.js`, packageUrl).href);
}

/**
 * Registers tsx and the `gpumesh-source` condition in this thread (a worker thread needs its own),
 * so TypeScript sources and @gpumesh/* sources import. False when tsx is not installed.
 * @returns {Promise<boolean>}
 */
export async function registerSource() {
  let tsx;
  try {
    tsx = await import('tsx/esm/api');
  } catch (error) {
    if (error?.code === 'ERR_MODULE_NOT_FOUND') return false;
    throw error;
  }
  tsx.register();
  register('./source-condition.js', import.meta.url);
  return true;
}
