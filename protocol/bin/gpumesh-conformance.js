#!/usr/bin/env node
// The conformance kit's command: registers tsx (the kit is TypeScript) and runs the CLI.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/conformance/cli.ts');
process.exitCode = await main(process.argv.slice(2));
