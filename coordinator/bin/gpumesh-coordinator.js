#!/usr/bin/env node
// The coordinator's command: its compiled code, or its sources in a checkout
// (@gpumesh/protocol/load-entry).
import { loadEntry } from '@gpumesh/protocol/load-entry';

const root = new URL('../', import.meta.url);
const argv = process.argv.slice(2);
// --help first, from a module with no imports: the server's load is the slow part.
const { asksForHelp, USAGE } = await loadEntry(root, 'usage');
if (asksForHelp(argv)) {
  process.stdout.write(USAGE);
} else {
  const { main } = await loadEntry(root, 'server');
  main(argv, process.env).catch((error) => {
    console.error(`gpumesh-coordinator: ${error?.message ?? error}`);
    process.exit(1);
  });
}
