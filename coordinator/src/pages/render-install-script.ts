/**
 * The line of install.sh that names the default coordinator, e.g. `DEFAULT_COORDINATOR="http://…"`
 * (optionally `readonly`, optionally `…_URL`). The coordinator serving the script replaces its value
 * with its own URL, so `curl <app>/install.sh | sh` connects the node to the coordinator it came from.
 */
const DEFAULT_COORDINATOR_LINE = /^(\s*(?:readonly\s+)?DEFAULT_COORDINATOR(?:_URL)?=).*$/m;

/** URLs that are safe inside a double-quoted shell string: no quotes, `$`, backticks, `\` or spaces. */
const SHELL_SAFE_URL = /^https?:\/\/[A-Za-z0-9._~:/?#[\]@!&()*+,;=%-]+$/;

/**
 * install.sh with `coordinatorUrl` as its default coordinator.
 * @throws Error when the script has no default-coordinator line or the URL is not shell-safe:
 * serving a script that would connect nodes elsewhere is worse than serving none.
 */
export function renderInstallScript(script: string, coordinatorUrl: string): string {
  if (!SHELL_SAFE_URL.test(coordinatorUrl)) {
    throw new Error(`install.sh: the coordinator URL ${JSON.stringify(coordinatorUrl)} is not shell-safe`);
  }
  if (!DEFAULT_COORDINATOR_LINE.test(script)) {
    throw new Error('install.sh: no DEFAULT_COORDINATOR= line to fill in');
  }
  return script.replace(DEFAULT_COORDINATOR_LINE, (_line, head: string) => `${head}"${coordinatorUrl}"`);
}
