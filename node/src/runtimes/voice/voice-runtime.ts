import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { NodeError } from '../../errors.js';
import type { JobResponse, Runtime, RuntimeJob, ServedModel } from '../runtime.js';
import { speak } from './speak.js';
import { transcribe, writePhraseGrammar } from './transcribe.js';

/** Model ids the built-in voice engines are offered under. */
export const ESPEAK_MODEL_ID = 'espeak-ng';
export const POCKETSPHINX_MODEL_ID = 'pocketsphinx-en-us';
export const DEFAULT_VOICE_CONCURRENCY = 2;

export type VoiceRuntimeOptions = {
  /**
   * Phrases the recognizer is confined to (a JSGF grammar): with them pocketsphinx gets each one
   * exactly; without, its general US-English language model is used (poor on synthetic speech).
   */
  phrases?: readonly string[];
  maxConcurrency?: number;
  /** Binaries (tests and unusual installs). */
  espeakBin?: string;
  soxBin?: string;
  pocketsphinxBin?: string;
};

const run = promisify(execFile);

/**
 * The built-in CPU voice engines from Debian packages, no downloads: text-to-speech with espeak-ng
 * (model `espeak-ng`, kind `speech`) and speech-to-text with pocketsphinx and its packaged
 * US-English model (model `pocketsphinx-en-us`, kind `transcription`). `load` fails when a binary
 * is missing (install them with `install.sh --voice`, or `apt-get install espeak-ng pocketsphinx
 * pocketsphinx-en-us sox`).
 */
export function createVoiceRuntime(options: VoiceRuntimeOptions = {}): Runtime {
  const maxConcurrency = options.maxConcurrency ?? DEFAULT_VOICE_CONCURRENCY;
  const espeak = options.espeakBin ?? 'espeak-ng';
  const sox = options.soxBin ?? 'sox';
  const models: ServedModel[] = [
    { id: ESPEAK_MODEL_ID, family: 'voice', contextLength: 4096, maxConcurrency, kinds: ['speech'] },
    {
      id: POCKETSPHINX_MODEL_ID,
      family: 'voice',
      contextLength: 0,
      maxConcurrency,
      kinds: ['transcription'],
    },
  ];
  let version = 'unknown';
  let grammarDir: string | undefined;
  let grammarFile: string | undefined;
  let alive = false;
  return {
    get info() {
      return { name: 'espeak-ng+pocketsphinx', version };
    },
    async load() {
      try {
        const { stdout } = await run(espeak, ['--version']);
        version = /([0-9]+\.[0-9]+(\.[0-9]+)?)/.exec(stdout)?.[1] ?? 'unknown';
        await run(sox, ['--version']);
      } catch (error) {
        throw new NodeError('model_load_failed', {
          detail:
            'espeak-ng and sox are needed: apt-get install espeak-ng pocketsphinx pocketsphinx-en-us sox',
          cause: error,
        });
      }
      if (options.phrases && options.phrases.length > 0) {
        grammarDir = await mkdtemp(path.join(tmpdir(), 'gpumesh-voice-'));
        grammarFile = path.join(grammarDir, 'phrases.gram');
        await writePhraseGrammar(options.phrases, grammarFile);
      }
      alive = true;
    },
    models: () => models,
    async run(job: RuntimeJob): Promise<JobResponse> {
      if (job.model === ESPEAK_MODEL_ID && job.kind === 'speech') return speak(job, espeak, sox);
      if (job.model === POCKETSPHINX_MODEL_ID && job.kind === 'transcription') {
        return transcribe(job, {
          ...(grammarFile ? { grammarFile } : {}),
          soxBin: sox,
          ...(options.pocketsphinxBin ? { pocketsphinxBin: options.pocketsphinxBin } : {}),
        });
      }
      if (!models.some((m) => m.id === job.model)) throw new NodeError('model_not_found');
      throw new NodeError('invalid_request', { detail: `${job.model} does not serve ${job.kind} jobs.` });
    },
    alive: () => alive,
    async close() {
      alive = false;
      if (grammarDir) await rm(grammarDir, { recursive: true, force: true });
    },
  };
}
