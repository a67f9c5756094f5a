#!/usr/bin/env node
// Registers tsx so the TypeScript sources run without a build step, then hands over to the CLI.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli.ts');
// Exit explicitly: a loaded llama.cpp binding can keep the event loop alive after the command is done.
process.exit(await main(process.argv.slice(2)));
