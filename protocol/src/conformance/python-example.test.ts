/**
 * The Python example node of WRITE_YOUR_OWN_NODE.md (examples/python/minimal_node.py) passes the
 * conformance kit. It needs Debian's python3-websockets, python3-ecdsa and python3-pycryptodome;
 * without them the test is skipped with a loud notice (CI installs them: .ci/run).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, test } from 'vitest';
import { NODE_SCENARIO_NAMES } from './node/node-scenarios.js';
import { runNodeConformance } from './node/run-node-conformance.js';
import { formatReport } from './report.js';

const script = fileURLToPath(new URL('../../examples/python/minimal_node.py', import.meta.url));
/** Debian's interpreter first: a pyenv or venv python3 on PATH does not see Debian's packages. */
const python = ['/usr/bin/python3', 'python3'].find(
  (candidate) =>
    spawnSync(candidate, ['-c', 'import websockets, ecdsa, Cryptodome'], { stdio: 'ignore' }).status === 0,
);
if (!python) {
  console.warn(
    '\n*** SKIPPED: the Python example node needs python3 with python3-websockets, python3-ecdsa and ' +
      'python3-pycryptodome (apt-get install python3-websockets python3-ecdsa python3-pycryptodome). ***\n',
  );
}

let child: ChildProcess | undefined;
afterAll(() => {
  child?.kill();
});

describe('examples/python/minimal_node.py', () => {
  test.skipIf(!python)(
    'default: passes every node scenario but those that need an embedding, vision, voice or kit model (it serves none)',
    async () => {
      let stderr = '';
      const report = await runNodeConformance({
        port: 0,
        heartbeatIntervalMs: 300,
        stepTimeoutMs: 3000,
        onListening: (url) => {
          child = spawn(python!, [script, url], { stdio: ['ignore', 'ignore', 'pipe'] });
          child.stderr?.on('data', (data: Buffer) => {
            stderr = (stderr + data.toString()).slice(-4000);
          });
        },
      });
      expect(report.results.map((r) => r.name)).toEqual(NODE_SCENARIO_NAMES);
      const notPassed = report.results
        .filter((r) => r.status !== 'pass')
        .map((r) => `${r.name}: ${r.status}`);
      expect(notPassed, `${formatReport(report)}\n${stderr}`).toEqual([
        'embedding: skip',
        'embedding_stream_flag: skip',
        'oversized_result: skip',
        // It serves no vision or voice model either.
        'vision: skip',
        'speech: skip',
        'transcription: skip',
        // Nor the kit model (and it claims no verify scope).
        'verify: skip',
        'verify_unknown_model: skip',
        'verify_bad_tokens: skip',
      ]);
    },
    120_000,
  );
});
