/**
 * OpenRouter's error shape, for requests on its base URL (`/api/v1/…`): the same error as on /v1
 * with `code` the HTTP status, as OpenRouter sends it and its SDK requires (errors.ts builds the
 * body; v1/sse.ts the in-stream error chunk).
 */

/** Whether a request came in on `/api/v1/…` (its URL before compose/create-fastify.ts rewrote it). */
export function isOpenRouterRequest(request: { readonly originalUrl?: string }): boolean {
  return (request.originalUrl ?? '').startsWith('/api/v1/');
}

/**
 * An error in OpenRouter's shape: `code` the HTTP status (a number); our code in
 * `metadata.error_type` (the canonical error type, as OpenRouter's in-stream errors carry it);
 * `message`, `type` and `param` as on /v1.
 */
export function toOpenRouterError(
  error: { message: string; type: string; code: string; param: string | null },
  status: number,
): Record<string, unknown> {
  return { ...error, code: status, metadata: { error_type: error.code } };
}

/** Whether `value` is an error body in OpenRouter's shape for a response of `status`. */
export function isOpenRouterErrorBody(value: unknown, status: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const e = (value as { error?: unknown }).error;
  if (typeof e !== 'object' || e === null) return false;
  const { message, type, code, param, metadata } = e as Record<string, unknown>;
  return (
    typeof message === 'string' &&
    typeof type === 'string' &&
    code === status &&
    (param === null || typeof param === 'string') &&
    typeof (metadata as { error_type?: unknown } | undefined)?.error_type === 'string' &&
    Object.keys(e).length === 5
  );
}
