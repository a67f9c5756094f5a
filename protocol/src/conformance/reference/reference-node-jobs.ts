import { randomUUID } from 'node:crypto';
import { createFrame } from '../../create-frame.js';
import { encodeFrame } from '../../encode-frame.js';
import { errorFrame } from '../../error-frame.js';
import type { ProtocolErrorCode } from '../../errors.js';
import type { ModelOffer } from '../../manifest.js';
import type { JobFrame } from '../../messages.js';
import { countPromptTokens, fakeEmbedding, fakeToken, usageOf } from './fake-inference.js';
import { fakeSpeech, fakeTranscription, REFERENCE_MEDIA_MODELS } from './reference-media.js';
import type { ReferenceNodeSession } from './reference-node-session.js';
import { REFERENCE_KIT_MODEL, referenceVerify } from './reference-verify.js';

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A job frame from the coordinator: refused with the registry's code when it can't run here
 * (duplicate, draining, overloaded, unknown model, wrong kind, invalid request), else started.
 */
export function acceptJob(session: ReferenceNodeSession, job: JobFrame) {
  const { breaks } = session;
  const refuse = (code: ProtocolErrorCode) =>
    session.send(errorFrame(code, { jobId: job.jobId, message: code }));
  const models = session.settings.manifest().models;
  // job.model names the model; request.model (the client's name for it) is not looked at, except
  // when broken on purpose.
  const name = breaks === 'model_field' && job.kind !== 'verify' ? job.request.model : job.model;
  const served =
    models.find((m) => m.id === name) ??
    (breaks === 'model_not_found' ? models.find((m) => m.family === 'chat') : undefined);
  if (session.jobs.has(job.jobId) && breaks !== 'duplicate_job') return refuse('duplicate_job');
  if (session.status === 'draining' && breaks !== 'draining_refusal') return refuse('draining');
  if (session.jobs.size >= session.capacity && breaks !== 'overloaded') return refuse('overloaded');
  if (!served) return refuse('model_not_found');
  if (job.kind === 'verify') return void runVerifyJob(session, job, served);
  if (served.id === REFERENCE_KIT_MODEL) {
    if (job.kind !== 'completion') return refuse('invalid_request');
    return void runTextJob(session, job);
  }
  if (REFERENCE_MEDIA_MODELS.includes(served)) {
    const fits =
      job.kind === 'vision'
        ? served.family === 'vision' && Array.isArray(job.request.messages)
        : (served.kinds as readonly string[] | undefined)?.includes(job.kind);
    if (!fits) return refuse('invalid_request');
    if (job.kind !== 'vision') return void runVoiceJob(session, job);
  } else {
    const family = job.kind === 'embedding' ? 'embedding' : 'chat';
    if ((served.family !== family || job.kind === 'vision') && breaks !== 'kind_mismatch')
      return refuse('invalid_request');
  }
  const prompt =
    job.kind === 'chat' || job.kind === 'vision'
      ? job.request.messages
      : job.kind === 'completion'
        ? job.request.prompt
        : 'ok';
  const valid = job.kind === 'chat' || job.kind === 'vision' ? Array.isArray(prompt) : prompt !== undefined;
  if (!valid && breaks !== 'invalid_request') return refuse('invalid_request');
  void runTextJob(session, job);
}

/** Counts a job as running and reports it (unless broken on purpose). */
function startJob(session: ReferenceNodeSession, job: JobFrame, counted = session.breaks !== 'presence') {
  const state = { cancelled: false };
  session.jobs.set(job.jobId, state);
  if (counted) session.reportPresence();
  return state;
}

/** Chat, completion, vision (a chat answer) and embedding jobs from the fake model of fake-inference.ts. */
async function runTextJob(session: ReferenceNodeSession, job: JobFrame) {
  const { breaks } = session;
  // Broken on purpose (presence_order): the job is counted only after its first chunk.
  const state = startJob(session, job, breaks !== 'presence' && breaks !== 'presence_order');
  const started = Date.now();
  const promptTokens = countPromptTokens(job.request);
  const id = `chatcmpl-${randomUUID()}`;
  const created = Math.floor(started / 1000);

  if (job.kind === 'embedding') {
    const input = job.request.input;
    let inputs = Array.isArray(input) ? input.map(String) : [String(input ?? '')];
    if (breaks === 'embedding') inputs = inputs.slice(0, 1);
    if (breaks === 'embedding_stream_flag' && job.stream) {
      const chunk = { object: 'list', data: [], model: job.model };
      session.send(createFrame('chunk', { jobId: job.jobId, seq: 0, chunk }));
    }
    const data = inputs.map((text, index) => ({
      object: 'embedding',
      index,
      embedding: fakeEmbedding(text),
    }));
    const result = createFrame('result', {
      jobId: job.jobId,
      response: { object: 'list', data, model: job.model, usage: usageOf(promptTokens, 0) },
    });
    // A result no frame can hold is never sent (§9 "Odd jobs"), unless broken on purpose.
    const tooLarge = Buffer.byteLength(encodeFrame(result)) > session.maxFrameBytes;
    if (tooLarge && breaks !== 'oversized_result') {
      session.send(
        errorFrame('invalid_request', { jobId: job.jobId, message: 'The response is too large.' }),
      );
    } else session.send(result);
    session.finishJob(job.jobId);
    return;
  }

  const maxTokens = typeof job.request.max_tokens === 'number' ? job.request.max_tokens : 16;
  const completion = job.kind === 'completion';
  const brokenChat = completion ? undefined : breaks;
  const stream =
    brokenChat === 'chat_stream' && job.kind === 'chat'
      ? false
      : (brokenChat === 'chat' && job.kind === 'chat') || (breaks === 'vision' && job.kind === 'vision')
        ? true
        : job.stream;
  let text = '';
  for (let i = 0; i < maxTokens; i++) {
    await delay(session.settings.tokenDelayMs);
    if (state.cancelled && breaks !== 'cancel') {
      session.send(errorFrame('job_cancelled', { jobId: job.jobId, message: 'cancelled' }));
      session.finishJob(job.jobId);
      return;
    }
    if (Date.now() - started > job.timeoutMs && breaks !== 'job_timeout') {
      session.send(errorFrame('job_timeout', { jobId: job.jobId, message: 'timed out' }));
      session.finishJob(job.jobId);
      return;
    }
    const token = fakeToken(i);
    text += token;
    if (stream) {
      const chunk =
        completion && breaks !== 'completion_stream'
          ? {
              id,
              object: 'text_completion',
              created,
              model: job.model,
              choices: [{ index: 0, text: token, finish_reason: null }],
            }
          : {
              id,
              object: 'chat.completion.chunk',
              created,
              model: job.model,
              choices: [
                {
                  index: 0,
                  delta: i === 0 ? { role: 'assistant', content: token } : { content: token },
                  finish_reason: null,
                },
              ],
            };
      session.send(
        createFrame('chunk', {
          jobId: job.jobId,
          seq: i,
          chunk,
          tokens: breaks === 'chat_stream_tokens' ? 2 : 1,
        }),
      );
    }
    if (breaks === 'presence_order' && i === 0) session.reportPresence();
  }
  // v0.5: a chat job's prompt tokens its (fake) prefix cache held.
  const { model, tools, messages } = job.request;
  // A chat job without a message list (a continuation's or a broken peer's) holds no prefix.
  const cache = job.kind === 'chat' && Array.isArray(messages) ? session.settings.prefixCache : undefined;
  const cached = cache?.serve(
    typeof model === 'string' ? model : job.model,
    tools,
    messages as unknown[],
    promptTokens,
  );
  const usage = {
    ...usageOf(promptTokens, maxTokens),
    ...(cached === undefined ? {} : { prompt_tokens_details: { cached_tokens: cached } }),
  };
  // A text completion answers with text (§9 "Kinds"); broken on purpose, with a chat message.
  const response =
    completion && breaks !== 'completion'
      ? {
          id,
          object: 'text_completion',
          created,
          model: job.model,
          choices: [{ index: 0, text, finish_reason: 'length' }],
          usage,
        }
      : {
          id,
          object: 'chat.completion',
          created,
          model: job.model,
          choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'length' }],
          usage,
        };
  session.send(createFrame('result', { jobId: job.jobId, response }));
  session.finishJob(job.jobId);
}

/** Speech and transcription from the fake engines of reference-media.ts. */
async function runVoiceJob(session: ReferenceNodeSession, job: JobFrame) {
  startJob(session, job);
  await delay(session.settings.tokenDelayMs);
  if (job.kind === 'speech') {
    const speech = fakeSpeech(String(job.request.input ?? ''), session.breaks === 'speech');
    for (const [seq, chunk] of speech.chunks.entries())
      session.send(createFrame('chunk', { jobId: job.jobId, seq, chunk }));
    session.send(createFrame('result', { jobId: job.jobId, response: speech.response }));
  } else {
    const file = job.request.file as { data?: unknown } | undefined;
    const response = fakeTranscription(String(file?.data ?? ''), session.breaks === 'transcription');
    session.send(
      response
        ? createFrame('result', { jobId: job.jobId, response })
        : errorFrame('invalid_request', { jobId: job.jobId, message: 'not a WAV file' }),
    );
  }
  session.finishJob(job.jobId);
}

/** A verify job, scored by the reference's stand-in (reference-verify.ts). */
async function runVerifyJob(session: ReferenceNodeSession, job: JobFrame, served: ModelOffer) {
  startJob(session, job);
  await delay(session.settings.tokenDelayMs);
  const verified = referenceVerify(served, job.request, session.breaks);
  session.send(
    'response' in verified
      ? createFrame('result', { jobId: job.jobId, response: verified.response })
      : errorFrame(verified.error, { jobId: job.jobId, message: verified.message }),
  );
  session.finishJob(job.jobId);
}
