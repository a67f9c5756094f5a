/**
 * The handlers that turn anything thrown inside a request into the common error body of the
 * registry in errors.ts: fastify's own errors mapped by code, everything unknown an internal_error.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, errorBodyFor } from './errors.js';
import { isOpenRouterRequest } from './openrouter-error.js';

/**
 * Maps anything thrown inside a request to an ApiError: ours pass through; fastify's own errors
 * (validation, bad JSON, body too large, media type, rate limit) map by code; everything else is an
 * internal_error whose details only reach the log.
 */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  const e = error as Partial<FastifyError> & { validation?: ValidationIssue[]; validationContext?: string };
  if (e?.validation && Array.isArray(e.validation)) {
    const issue = e.validation[0];
    const param = paramOf(e.validationContext, issue);
    const where = param ? `${param}: ` : '';
    return new ApiError(
      'invalid_request',
      `Invalid ${e.validationContext ?? 'request'}: ${where}${issue?.message ?? 'invalid'}`,
      {
        param,
      },
    );
  }
  switch (e?.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('payload_too_large');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError('unsupported_media_type');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError('invalid_request', 'The JSON body is empty.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new ApiError('invalid_request', 'The body is not valid JSON.');
  }
  const status = typeof e?.statusCode === 'number' ? e.statusCode : 500;
  if (status === 429) return new ApiError('rate_limited');
  if (status === 413) return new ApiError('payload_too_large');
  if (status === 415) return new ApiError('unsupported_media_type');
  if (status === 404) return new ApiError('not_found');
  if (status === 405) return new ApiError('method_not_allowed');
  if (status === 401) return new ApiError('invalid_credential');
  if (status >= 400 && status < 500) {
    // A client error raised by fastify or a plugin (bad JSON, bad header, …): its message names no
    // secret, but we keep ours generic anyway so no library text leaks.
    return new ApiError(
      'invalid_request',
      error instanceof SyntaxError ? 'The body is not valid JSON.' : undefined,
    );
  }
  return new ApiError('internal_error', undefined, { cause: error });
}

type ValidationIssue = { instancePath?: string; params?: Record<string, unknown>; message?: string };

function paramOf(context: string | undefined, issue: ValidationIssue | undefined): string | null {
  if (!issue) return null;
  const missing = issue.params?.missingProperty ?? issue.params?.additionalProperty;
  const pathParts = (issue.instancePath ?? '').split('/').filter(Boolean);
  if (typeof missing === 'string') pathParts.push(missing);
  if (pathParts.length > 0) return pathParts.join('.');
  return context === 'body' ? null : (context ?? null);
}

/** fastify error handler: every error leaves in the common shape. */
export function errorHandler(error: unknown, request: FastifyRequest, reply: FastifyReply): void {
  let apiError = toApiError(error);
  // OpenRouter answers some errors with another code (its status and type follow the code).
  if (apiError.openRouterCode && isOpenRouterRequest(request))
    apiError = new ApiError(apiError.openRouterCode, apiError.message, { param: apiError.param });
  if (apiError.status >= 500) {
    request.log.error({ err: error }, 'request failed');
  }
  if (apiError.retryAfterS !== undefined) reply.header('retry-after', String(apiError.retryAfterS));
  // Errors raised before any hook ran (a bad URL) carry the request id too.
  if (!reply.hasHeader('x-request-id')) reply.header('x-request-id', request.id);
  const body = errorBodyFor(request, apiError);
  void reply.status(apiError.status).type('application/json; charset=utf-8').send(body);
}
