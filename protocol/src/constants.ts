/** The protocol version this package speaks. Frames carry it in `v`. */
export const PROTOCOL_VERSION = 0;

/** Every protocol version this package can negotiate, highest first. */
export const SUPPORTED_PROTOCOL_VERSIONS: readonly number[] = [0];

/** How often a node sends `ping` unless the coordinator's `welcome` says otherwise. */
export const DEFAULT_HEARTBEAT_INTERVAL_MS = 10_000;

/** Smallest heartbeat interval a coordinator may grant (conformance kits use short ones). */
export const MIN_HEARTBEAT_INTERVAL_MS = 50;

/** Largest heartbeat interval a coordinator may grant. */
export const MAX_HEARTBEAT_INTERVAL_MS = 300_000;

/** A session whose peer sent nothing for TTL = this many heartbeat intervals is dead. */
export const TTL_HEARTBEAT_MULTIPLIER = 2;

/** Default session time-to-live: 2 × the default heartbeat interval. */
export const DEFAULT_TTL_MS = DEFAULT_HEARTBEAT_INTERVAL_MS * TTL_HEARTBEAT_MULTIPLIER;

/** Largest WebSocket message either side accepts unless `welcome` says otherwise (4 MiB). */
export const DEFAULT_MAX_FRAME_BYTES = 4 * 1024 * 1024;

/** Smallest `maxFrameBytes` a coordinator may grant (a manifest must fit). */
export const MIN_MAX_FRAME_BYTES = 64 * 1024;

/** How long a challenge stays valid after it is issued. */
export const DEFAULT_CHALLENGE_TTL_MS = 60_000;

/** How long a coordinator waits for `hello`, `auth` and `manifest` before closing. */
export const DEFAULT_HANDSHAKE_TIMEOUT_MS = 10_000;

/** Job timeout when the coordinator has no better figure. */
export const DEFAULT_JOB_TIMEOUT_MS = 120_000;

/** How long a draining node may take to finish in-flight jobs before it must leave anyway. */
export const DEFAULT_DRAIN_TIMEOUT_MS = 30_000;

/** The WebSocket close code for a normal close (after `bye`). */
export const NORMAL_CLOSE_CODE = 1000;

/** Session TTL for a heartbeat interval: {@link TTL_HEARTBEAT_MULTIPLIER} × interval. */
export function ttlMsFor(heartbeatIntervalMs: number): number {
  return heartbeatIntervalMs * TTL_HEARTBEAT_MULTIPLIER;
}
