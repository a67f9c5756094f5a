import { loadConfig } from '../../config.js';
import { migrate } from '../../db/migrate.js';
import { openStore } from '../../db/store.js';
import { reinstate } from './reinstate.js';

/** The audit log's actor for the command line. */
export const OPERATOR_ACTOR = 'operator';

/**
 * `gpumesh-coordinator reinstate <nodeId> --reason "…" [config flags]`: puts a suspended node back on
 * probation (trust/standing/reinstate.ts) in the store the configuration names (the same flags and
 * environment as the server), with an audit row whose actor is `operator`. Returns the exit code:
 * 0 reinstated, 1 refused (unknown node, or not suspended), 2 a usage error.
 */
export async function reinstateCommand(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  io: { out: (line: string) => void; err: (line: string) => void },
  /** Configuration set in code (tests); wins over flags. */
  overrides?: Record<string, unknown>,
): Promise<number> {
  const nodeId = argv[0] !== undefined && !argv[0].startsWith('--') ? argv[0] : undefined;
  const reason = reasonOf(argv);
  if (!nodeId || !reason) {
    io.err(
      'usage: gpumesh-coordinator reinstate <nodeId> --reason "why the suspension is lifted" [config flags]',
    );
    return 2;
  }
  const config = loadConfig({ argv: argv.slice(1), env, ...(overrides ? { overrides } : {}) });
  const store = openStore(config);
  try {
    await migrate(store.db);
    const result = await reinstate(store, { nodeId, reason, actor: OPERATOR_ACTOR, now: Date.now() });
    if (!result.ok) {
      io.err(
        result.problem === 'unknown_node'
          ? `reinstate: node ${result.nodeId} has no standing here (never verified, never suspended); nothing changed`
          : `reinstate: node ${result.nodeId} is ${result.status}, not suspended; nothing changed`,
      );
      return 1;
    }
    io.out(
      `reinstated ${result.nodeId}: on probation (was suspended after ${result.before.failed} failed, ${result.before.passed} passed verifications); audit ${result.auditId}`,
    );
    return 0;
  } finally {
    await store.close();
  }
}

/** `--reason "…"` or `--reason=…`, trimmed; undefined when absent or empty. */
function reasonOf(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const value = arg.startsWith('--reason=')
      ? arg.slice('--reason='.length)
      : arg === '--reason'
        ? argv[i + 1]
        : undefined;
    if (value !== undefined) return value.trim() || undefined;
  }
  return undefined;
}
