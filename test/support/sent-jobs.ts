import type { FastifyInstance } from 'fastify';
import { vi } from 'vitest';
import type { JobHandlers, JobSpec } from '../../coordinator/src/hub/jobs.js';
import type { Slot } from '../../coordinator/src/router/router.js';

/** What a job sent to a node looked like, and the text its chunks carried. */
export type SentJob = { nodeId: string; continueFrom: string | undefined; text: string };

/**
 * Records every job `app`'s router sends to a node, as it sends it (a spy on router.dispatch): its
 * node (lowercase), its continueFrom text and its chunks' text so far. Empty the array to start over.
 */
export function recordSentJobs(app: FastifyInstance): SentJob[] {
  const sent: SentJob[] = [];
  const dispatch = app.router.dispatch.bind(app.router);
  vi.spyOn(app.router, 'dispatch').mockImplementation((slot: Slot, spec: JobSpec, handlers: JobHandlers) => {
    const job: SentJob = {
      nodeId: slot.entry.node.nodeId.toLowerCase(),
      continueFrom: spec.continueFrom?.text,
      text: '',
    };
    sent.push(job);
    return dispatch(slot, spec, {
      ...handlers,
      onChunk: (chunk, seq, tokens) => {
        const choice = (chunk.choices as { delta?: { content?: string } }[] | undefined)?.[0];
        job.text += choice?.delta?.content ?? '';
        handlers.onChunk?.(chunk, seq, tokens);
      },
    });
  });
  return sent;
}
