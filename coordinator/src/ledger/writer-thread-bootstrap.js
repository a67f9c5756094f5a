// The ledger writer thread's entry (ledger/writer.ts): a worker starts from plain JavaScript, so
// it registers tsx before it loads the TypeScript sources, as bin/gpumesh-coordinator.js does.
import { register } from 'tsx/esm/api';

register();
await import('./writer-thread.ts');
