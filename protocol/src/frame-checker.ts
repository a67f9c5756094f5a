import type { TSchema } from '@sinclair/typebox';
import { type TypeCheck, TypeCompiler } from '@sinclair/typebox/compiler';
import { frameRuleViolation } from './frame-rules.js';
import { FRAME_SCHEMAS, type FrameType } from './messages.js';

const compiled = new Map<FrameType, TypeCheck<TSchema>>();

/** The compiled validator of one frame type (compiled on first use, so importing costs nothing). */
export function frameChecker(type: FrameType): TypeCheck<TSchema> {
  let check = compiled.get(type);
  if (!check) {
    check = TypeCompiler.Compile(FRAME_SCHEMAS[type]);
    compiled.set(type, check);
  }
  return check;
}

/** A short description of the first schema violation of `value` against `type`, or undefined. */
export function firstViolation(type: FrameType, value: unknown): string | undefined {
  const error = frameChecker(type).Errors(value).First();
  return error ? `${error.path || '/'}: ${error.message}` : undefined;
}

/**
 * `frameType path: message` when `value` breaks its schema or a rule across its fields
 * (frame-rules.ts), else undefined: what parseFrame and encodeFrame refuse as schema_violation.
 */
export function frameViolation(type: FrameType, value: unknown): string | undefined {
  if (!frameChecker(type).Check(value)) return `${type} ${firstViolation(type, value)}`;
  const rule = frameRuleViolation(type, value as Record<string, unknown>);
  return rule === undefined ? undefined : `${type} ${rule}`;
}
