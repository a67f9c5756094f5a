// The ledger writer thread's entry when the coordinator runs from its TypeScript sources
// (ledger/writer.ts; compiled, the thread starts from writer-thread.js itself): a worker starts from
// plain JavaScript, so it registers tsx and the gpumesh-source condition before it loads the sources.
import { registerSource } from '@gpumesh/protocol/load-entry';

if (!(await registerSource()))
  throw new Error('the ledger writer runs from TypeScript sources only with tsx');
await import('./writer-thread.ts');
