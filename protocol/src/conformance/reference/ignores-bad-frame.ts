import { ProtocolError } from '../../errors.js';

/**
 * For the bad-frame scenarios (v0.1): whether a reference peer broken on `breaks` lets this parse
 * error of an inbound message pass instead of closing the session. Both reference peers ask it.
 */
export function ignoresBadFrame(
  breaks: string | undefined,
  error: unknown,
  data: Buffer,
  binary: boolean,
): boolean {
  if (!breaks || !(error instanceof ProtocolError)) return false;
  switch (breaks) {
    case 'malformed':
      return !binary && error.code === 'malformed_frame';
    case 'unknown_type':
      return error.code === 'unknown_type';
    case 'binary':
      return binary;
    case 'wrong_version':
      return error.code === 'unsupported_version';
    case 'missing_version':
      return error.code === 'schema_violation' && !data.toString('utf8').includes('"v"');
    case 'schema_violation':
      return error.code === 'schema_violation' && data.toString('utf8').includes('"v"');
    default:
      return false;
  }
}
