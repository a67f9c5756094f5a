import { readFileSync } from 'node:fs';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

/** This daemon, as `hello` and the manifest name it. */
export const SOFTWARE = Object.freeze({ name: 'gpumesh-node', version: pkg.version });
