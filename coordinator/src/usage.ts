// The coordinator command's usage, apart from the server: bin/gpumesh-coordinator.js answers
// --help from here without loading the app (seconds in a source checkout under load).

/** What `gpumesh-coordinator --help` prints. */
export const USAGE = `Usage: gpumesh-coordinator [command] [flags]

Commands:
  (none)      start the coordinator (flags: --port N, --data-dir DIR, --config FILE, any config field
              as --kebab-path, e.g. --chain-rpc-url URL; environment GPUMESH_*, DATABASE_URL, REDIS_URL)
  reconcile   check the books: each ledger balance = Σ its entries, no stale hold, every proxy
              wallet holds the tokens its credits stand on; prints differences, exits 1 on any
              (--json for a machine-readable report; same flags and environment as the server)
  reinstate <nodeId> --reason "…"
              put a suspended node back on probation, with an audit row (actor operator); refuses
              an unknown or not-suspended node (exit 1); same flags and environment as the server
  --help      this text
`;

/** Whether the command line asks for help: `help`, or `--help`/`-h` anywhere (`reconcile --help`). */
export function asksForHelp(argv: readonly string[]): boolean {
  return argv[0] === 'help' || argv.some((arg) => arg === '--help' || arg === '-h');
}
