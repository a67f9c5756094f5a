import { SUPPORTED_PROTOCOL_VERSIONS } from './constants.js';

/**
 * The highest protocol version both peers speak, or undefined when there is none (the coordinator
 * then closes with `unsupported_version`).
 */
export function negotiateVersion(
  offered: readonly number[],
  supported: readonly number[] = SUPPORTED_PROTOCOL_VERSIONS,
): number | undefined {
  const common = offered.filter((version) => supported.includes(version));
  return common.length === 0 ? undefined : Math.max(...common);
}
