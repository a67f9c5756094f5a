#!/usr/bin/env node
// The coordinator's command: its compiled code, or its sources in a checkout
// (@gpumesh/protocol/load-entry).
import { loadEntry } from '@gpumesh/protocol/load-entry';

const { main } = await loadEntry(new URL('../', import.meta.url), 'server');
main(process.argv.slice(2), process.env).catch((error) => {
  console.error(`gpumesh-coordinator: ${error?.message ?? error}`);
  process.exit(1);
});
