import { PROTOCOL_ERRORS } from '@gpumesh/protocol';

/**
 * The coordinator's closes for a problem on the node's side — version (4004), manifest signature (4007),
 * manifest refused (4008) — after which the node waits the longest delay (NODE_PROTOCOL.md §12; 4006
 * and 4012 stop it).
 */
const NODE_SIDE_CLOSE_CODES = new Set<number>([
  PROTOCOL_ERRORS.unsupported_version.closeCode,
  PROTOCOL_ERRORS.manifest_signature_invalid.closeCode,
  PROTOCOL_ERRORS.manifest_rejected.closeCode,
]);

/** What a closed hub session means for the node: stop for good (and why), or reconnect after a delay. */
export type HubCloseVerdict = { refused: string } | { refused?: undefined; longestDelay: boolean };

/**
 * Reads a hub session's close `code`. Retrying can't fix a refused signature or owner proof, nor a
 * suspension: the node stops, with the hub's last error message (or the registry's). The
 * coordinator's close for a problem on the node's side (version, manifest) waits the longest delay;
 * the node's own close (`closedByUs`), whatever its code, backs off as usual (§12).
 */
export function hubCloseVerdict(code: number, closedByUs: boolean, lastHubError?: string): HubCloseVerdict {
  if (code === PROTOCOL_ERRORS.auth_failed.closeCode)
    return { refused: lastHubError ?? PROTOCOL_ERRORS.auth_failed.message };
  if (code === PROTOCOL_ERRORS.node_suspended.closeCode)
    return { refused: lastHubError ?? PROTOCOL_ERRORS.node_suspended.message };
  return { longestDelay: !closedByUs && NODE_SIDE_CLOSE_CODES.has(code) };
}
