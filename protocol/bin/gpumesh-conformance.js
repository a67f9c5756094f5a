#!/usr/bin/env node
// The conformance kit's command: its compiled code, or its sources in a checkout (load-entry.js).
import { loadEntry } from './load-entry.js';

const { main } = await loadEntry(new URL('../', import.meta.url), 'conformance/cli');
process.exitCode = await main(process.argv.slice(2));
