import { randomUUID } from 'node:crypto';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { createFrame } from '../../create-frame.js';
import { encodeFrame } from '../../encode-frame.js';
import { KIT_MODEL_SHA256 } from '../../kit-model/kit-model.js';
import type { Manifest, ModelOffer } from '../../manifest.js';
import { type JobFrame, VerificationResponse, type VerifyRequest } from '../../messages.js';
import { ConformanceFailure, ConformanceSkip, check } from '../failure.js';
import { admitAndSettle } from './admit-node.js';
import { collectJob, expectJobError, requireResult } from './collect-job.js';
import type { NodeScenario, NodeScenarioContext } from './context.js';
import { sampledMismatch, verificationMismatch, verifyVectors } from './verify-vectors.js';

const ADMITTED = ['handshake', 'manifest'] as const;
const checkVerification = TypeCompiler.Compile(VerificationResponse);

/** The node's offer of the kit model (a chat or text model with its sha256, under scope verify); skips without one. */
function kitModelOf(manifest: Manifest): ModelOffer {
  if (!manifest.scopes.includes('verify')) throw new ConformanceSkip('the manifest claims no verify scope');
  const model = manifest.models.find(
    (m) => (m.family === 'chat' || m.family === 'text') && m.sha256 === KIT_MODEL_SHA256,
  );
  if (!model) {
    throw new ConformanceSkip(
      'no chat or text model has the kit model’s sha256 (gpumesh-conformance kit-model writes it)',
    );
  }
  return model;
}

function verifyJob(model: string, request: VerifyRequest, timeoutMs: number): JobFrame {
  return createFrame('job', {
    jobId: `job-${randomUUID()}`,
    kind: 'verify',
    model,
    request,
    stream: false,
    timeoutMs,
  });
}

async function runJob(context: NodeScenarioContext, job: JobFrame) {
  context.socket.send(job);
  const outcome = await collectJob(context.socket, job.jobId, context.settings.jobTimeoutMs);
  check(outcome.chunks.length === 0, `${outcome.chunks.length} chunks for a verify job`);
  return outcome;
}

/** Verification scenarios (NODE_PROTOCOL.md §9 "Verification", §13 "The kit model"). */
export const VERIFY_SCENARIOS: readonly NodeScenario[] = [
  {
    name: 'verify',
    description:
      'verify jobs on the kit model: one verification per reference case, each log-probability within the vectors’ tolerance, in_top_k as theirs off the top-k edge, every token counted as prompt; cases with sampling (v0.2) send it and hold the answer’s sampled_logprobs, entropy, entropy_var, top_k_mass and edge_gaps to theirs (null only at the kept set’s edge), and its texts, when sent, to theirs exactly',
    needs: ADMITTED,
    run: async (context) => {
      const model = kitModelOf((await admitAndSettle(context)).manifest).id;
      const vectors = verifyVectors();
      for (const [i, reference] of vectors.cases.entries()) {
        const request: VerifyRequest = {
          promptTokenIds: reference.promptTokenIds,
          completionTokenIds: reference.completionTokenIds,
          topK: vectors.topK,
          // A v0 coordinator sends no sha256: the node scores all the same.
          ...(i % 2 === 0 ? { sha256: KIT_MODEL_SHA256 } : {}),
          // v0.2: the generator's settings; the answer then describes the processed distribution.
          ...(reference.sampling ? { sampling: reference.sampling } : {}),
        };
        const outcome = await runJob(context, verifyJob(model, request, context.settings.jobTimeoutMs));
        const response = requireResult(outcome).response;
        if (!checkVerification.Check(response)) {
          const first = checkVerification.Errors(response).First();
          throw new ConformanceFailure(
            `${reference.name}: not a verification: ${first ? `${first.path} ${first.message}` : ''}`,
          );
        }
        const mismatch =
          verificationMismatch(reference, response, vectors.toleranceNats) ??
          sampledMismatch(reference, response, vectors.sampledTolerance);
        if (mismatch) throw new ConformanceFailure(`${reference.name}: ${mismatch}`);
        const evaluated = reference.promptTokenIds.length + reference.completionTokenIds.length;
        check(
          response.usage.prompt_tokens === evaluated && response.usage.completion_tokens === 0,
          `${reference.name}: usage ${response.usage.prompt_tokens}/${response.usage.completion_tokens}, expected ${evaluated} prompt tokens and 0 completion tokens`,
        );
      }
    },
  },
  {
    name: 'verify_unknown_model',
    description:
      'a verify job whose sha256 is not the weights the node holds under that id: error model_not_found, never a score from other weights',
    needs: ADMITTED,
    run: async (context) => {
      const model = kitModelOf((await admitAndSettle(context)).manifest).id;
      const reference = verifyVectors().cases[0]!;
      const job = verifyJob(
        model,
        {
          promptTokenIds: reference.promptTokenIds,
          completionTokenIds: reference.completionTokenIds,
          topK: verifyVectors().topK,
          sha256: 'f'.repeat(64),
        },
        context.settings.jobTimeoutMs,
      );
      expectJobError(await runJob(context, job), 'model_not_found');
    },
  },
  {
    name: 'verify_bad_tokens',
    description:
      'a verify job with a token id outside the vocabulary: invalid_request; one with more tokens than the model’s contextLength: context_length_exceeded',
    needs: ADMITTED,
    run: async (context) => {
      const offer = kitModelOf((await admitAndSettle(context)).manifest);
      const vectors = verifyVectors();
      const reference = vectors.cases[0]!;
      const outside = verifyJob(
        offer.id,
        {
          promptTokenIds: reference.promptTokenIds,
          completionTokenIds: [...reference.completionTokenIds.slice(0, 3), vectors.model.vocabularySize],
          topK: vectors.topK,
        },
        context.settings.jobTimeoutMs,
      );
      expectJobError(await runJob(context, outside), 'invalid_request');

      // contextLength + 1 tokens, all in the vocabulary: the prompt repeated, then one completion token.
      const promptTokenIds = Array.from(
        { length: offer.contextLength },
        (_, i) => reference.promptTokenIds[i % reference.promptTokenIds.length]!,
      );
      const tooLong = verifyJob(
        offer.id,
        { promptTokenIds, completionTokenIds: reference.completionTokenIds.slice(0, 1), topK: vectors.topK },
        context.settings.jobTimeoutMs,
      );
      check(
        Buffer.byteLength(encodeFrame(tooLong)) <= context.settings.maxFrameBytes,
        `contextLength ${offer.contextLength} needs a verify job larger than maxFrameBytes ${context.settings.maxFrameBytes}; serve the kit model with its own context (${vectors.model.contextLength})`,
      );
      expectJobError(await runJob(context, tooLong), 'context_length_exceeded');
    },
  },
];
