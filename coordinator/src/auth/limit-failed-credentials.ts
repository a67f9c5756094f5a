import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../errors.js';
import type { FailureCounter } from './create-failure-counter.js';

export type LimitFailedCredentialsOptions = {
  counter: FailureCounter;
  /** Failed credentials one IP may present per window. */
  max: number;
};

const presentsCredential = (request: FastifyRequest) => typeof request.headers.authorization === 'string';

/**
 * A per-IP budget of failed credentials, checked BEFORE any credential is (a global onRequest hook
 * runs ahead of the routes' auth hooks and of the per-user limiter). Each 401 answered to a request
 * that presented an Authorization header counts one failure for its IP; once an IP reached `max`
 * in the window, every request from it that presents a credential is 429 `rate_limited` with
 * Retry-After until the window ends — a valid one too, as telling them apart is the work (a hash
 * and a database lookup per sk- key) the budget exists to stop. Requests without a credential are
 * not affected (they cost no lookup; the anonymous limit covers them). Counting happens after the
 * answer, so a burst in flight when the budget runs out may pass it by at most its own size.
 * If the counter fails (Redis down), requests pass and the error is logged, as with the limiter.
 */
export function limitFailedCredentials(app: FastifyInstance, options: LimitFailedCredentialsOptions): void {
  const { counter, max } = options;
  app.addHook('onRequest', async (request) => {
    if (!presentsCredential(request)) return;
    let state: Awaited<ReturnType<FailureCounter['read']>>;
    try {
      state = await counter.read(request.ip);
    } catch (error) {
      request.log.warn({ err: error }, 'failed-credential counter unavailable');
      return;
    }
    if (state.count < max) return;
    const retryAfterS = Math.max(1, Math.ceil(state.resetInMs / 1000));
    throw new ApiError(
      'rate_limited',
      `Too many failed credentials from this address; retry in ${retryAfterS} s.`,
      { retryAfterS },
    );
  });
  app.addHook('onResponse', async (request, reply) => {
    if (reply.statusCode !== 401 || !presentsCredential(request)) return;
    await counter.add(request.ip).catch((error: unknown) => {
      request.log.warn({ err: error }, 'failed-credential counter unavailable');
    });
  });
}
