#!/usr/bin/env node
// The node's command: its compiled code, or its sources in a checkout (@gpumesh/protocol/load-entry).
import { loadEntry } from '@gpumesh/protocol/load-entry';

const { main } = await loadEntry(new URL('../', import.meta.url), 'cli');
// Exit explicitly: a loaded llama.cpp binding can keep the event loop alive after the command is done.
process.exit(await main(process.argv.slice(2)));
