/**
 * The Python example node of WRITE_YOUR_OWN_NODE.md (examples/python/minimal_node.py) passes the
 * conformance kit. It needs Debian's python3-websockets, python3-ecdsa and python3-pycryptodome;
 * without them the test is skipped with a loud notice (CI installs them: .ci/run). With
 * python3-numpy it is also a verifier of the kit model (examples/python/kit_verifier.py): a second,
 * independent implementation of the verify job — v0.2's processed distribution and detokenized
 * texts included — held to the kit's reference results.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, test } from 'vitest';
import { buildKitModel, KIT_MODEL_FILE } from '../kit-model/kit-model.js';
import { NODE_SCENARIO_NAMES } from './node/node-scenarios.js';
import { runNodeConformance } from './node/run-node-conformance.js';
import {
  type SampledAnswer,
  sampledMismatch,
  verificationMismatch,
  verifyVectors,
} from './node/verify-vectors.js';
import { formatReport } from './report.js';

const script = fileURLToPath(new URL('../../examples/python/minimal_node.py', import.meta.url));
const examples = fileURLToPath(new URL('../../examples/python/', import.meta.url));
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

const numpy =
  python !== undefined && spawnSync(python, ['-c', 'import numpy'], { stdio: 'ignore' }).status === 0;
if (python && !numpy) {
  console.warn(
    '\n*** SKIPPED: the Python verifier needs python3-numpy (apt-get install python3-numpy). ***\n',
  );
}

/** Every node process started (the kit may call onListening more than once): all are reaped. */
const children = new Set<ChildProcess>();
function startNode(url: string, env?: NodeJS.ProcessEnv): ChildProcess {
  const child = spawn(python!, [script, url], {
    stdio: ['ignore', 'ignore', 'pipe'],
    ...(env ? { env } : {}),
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}
function stopNodes(): void {
  for (const child of children) child.kill();
}
afterAll(stopNodes);

describe('examples/python/minimal_node.py', () => {
  test.skipIf(!python)(
    'default: passes every node scenario but those that need an embedding, vision, voice or kit model (it serves none)',
    async () => {
      let stderr = '';
      const report = await runNodeConformance({
        port: 0,
        heartbeatIntervalMs: 300,
        stepTimeoutMs: 10_000,
        onListening: (url) => {
          const child = startNode(url);
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

  test.skipIf(!numpy)(
    'default: with the kit model (GPUMESH_KIT_MODEL) its numpy verifier passes the verify scenarios, the v0.2 fields under each case’s sampling included',
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'gpumesh-python-verifier-'));
      const model = join(dir, KIT_MODEL_FILE);
      await writeFile(model, buildKitModel());
      let stderr = '';
      try {
        const report = await runNodeConformance({
          port: 0,
          heartbeatIntervalMs: 300,
          stepTimeoutMs: 10_000,
          scenarios: ['handshake', 'manifest', 'verify', 'verify_unknown_model', 'verify_bad_tokens'],
          onListening: (url) => {
            const child = startNode(url, { ...process.env, GPUMESH_KIT_MODEL: model });
            child.stderr?.on('data', (data: Buffer) => {
              stderr = (stderr + data.toString()).slice(-4000);
            });
          },
        });
        expect(
          report.results.map((r) => [r.name, r.status]),
          `${formatReport(report)}\n${stderr}`,
        ).toEqual([
          ['handshake', 'pass'],
          ['manifest', 'pass'],
          ['verify', 'pass'],
          ['verify_unknown_model', 'pass'],
          ['verify_bad_tokens', 'pass'],
        ]);
      } finally {
        stopNodes();
        await rm(dir, { recursive: true, force: true });
      }
    },
    120_000,
  );

  test.skipIf(!numpy)(
    'behavior: kit_verifier.py gives every field of every reference case within 0.01 nats of node-llama-cpp’s (a fifth of the kit’s tolerance; masses within 0.001), and the same texts',
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'gpumesh-python-verifier-'));
      const model = join(dir, KIT_MODEL_FILE);
      await writeFile(model, buildKitModel());
      try {
        const vectors = verifyVectors();
        const run = spawnSync(
          python!,
          [
            '-c',
            'import json, sys; from kit_verifier import KitVerifier; k = KitVerifier(sys.argv[1]); ' +
              'v = json.load(sys.stdin); ' +
              'print(json.dumps([k.verify(c["promptTokenIds"], c["completionTokenIds"], v["topK"], c.get("sampling")) for c in v["cases"]]))',
            model,
          ],
          { cwd: examples, input: JSON.stringify(vectors), encoding: 'utf8' },
        );
        expect(run.status, run.stderr).toBe(0);
        const answers = JSON.parse(run.stdout) as ({
          logprobs: number[];
          in_top_k: string;
        } & SampledAnswer)[];
        const drift = { nats: 0.01, entropyVarRelative: 0.01, topKMass: 0.001 };
        const worst: Record<string, number> = {};
        for (const [i, reference] of vectors.cases.entries()) {
          const answer = answers[i]!;
          expect(verificationMismatch(reference, answer, drift.nats), reference.name).toBeUndefined();
          expect(sampledMismatch(reference, answer, drift), reference.name).toBeUndefined();
          if (!reference.sampling) continue;
          expect([answer.prompt_text, answer.completion_text], reference.name).toEqual([
            reference.prompt_text,
            reference.completion_text,
          ]);
          for (const field of [
            'sampled_logprobs',
            'entropy',
            'entropy_var',
            'top_k_mass',
            'edge_gaps',
          ] as const) {
            const got = answer[field]!;
            reference[field]!.forEach((want, j) => {
              const d = want === null || got[j] === null ? 0 : Math.abs(got[j]! - want);
              worst[field] = Math.max(worst[field] ?? 0, d);
            });
          }
        }
        const rounded = Object.entries(worst)
          .map(([field, d]) => `${field} ${d.toFixed(4)}`)
          .join(', ');
        console.log(`kit_verifier.py vs node-llama-cpp, largest difference: ${rounded}`);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
    60_000,
  );
});
