#!/usr/bin/env node
// Runs the coordinator from its TypeScript sources (tsx), so no build step is needed.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/server.ts');
main(process.argv.slice(2), process.env).catch((error) => {
  console.error(`gpumesh-coordinator: ${error?.message ?? error}`);
  process.exit(1);
});
