import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { TranscriptionRequestSchema } from '@gpumesh/protocol';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { NodeError } from '../../errors.js';
import type { JobResponse, RuntimeJob } from '../runtime.js';
import { runProcess } from './run-process.js';

const checkTranscription = TypeCompiler.Compile(TranscriptionRequestSchema);

/** Debian's pocketsphinx-en-us model: acoustic model and pronunciation dictionary. */
export const POCKETSPHINX_MODEL_DIR = '/usr/share/pocketsphinx/model/en-us';
/** pocketsphinx's acoustic model takes 16 kHz 16-bit mono. */
const SAMPLE_RATE = 16_000;
const BYTES_PER_SECOND = SAMPLE_RATE * 2;
const WAV_HEADER_BYTES = 44;
/** File extensions sox reads here, so it knows the container. */
const SOX_TYPES = new Set(['wav', 'flac', 'ogg', 'oga', 'aiff', 'aif', 'au', 'raw']);

export type TranscribeOptions = {
  /** A JSGF grammar file the recognizer is confined to (see phraseGrammar). */
  grammarFile?: string;
  soxBin?: string;
  pocketsphinxBin?: string;
  modelDir?: string;
};

/**
 * A `transcription` job on pocketsphinx: the file written to a private temporary directory,
 * resampled by sox to 16 kHz mono 16-bit WAV, recognized with the packaged US-English model (its
 * language model, or the node's phrase grammar when it has one). The answer is the verbose shape;
 * usage: the seconds of audio.
 */
export async function transcribe(job: RuntimeJob, options: TranscribeOptions = {}): Promise<JobResponse> {
  if (!checkTranscription.Check(job.request))
    throw new NodeError('invalid_request', { detail: 'Not a transcription request.' });
  const request = job.request;
  if (request.language !== undefined && request.language.toLowerCase() !== 'en')
    throw new NodeError('invalid_request', {
      detail: 'This model transcribes English (language "en") only.',
    });
  const audio = Buffer.from(request.file.data, 'base64');
  const ext = path.extname(request.file.name).slice(1).toLowerCase();
  const type = SOX_TYPES.has(ext) ? ext : 'wav';
  const dir = await mkdtemp(path.join(tmpdir(), 'gpumesh-stt-'));
  try {
    const input = path.join(dir, `in.${type}`);
    const wav16 = path.join(dir, 'in16.wav');
    await writeFile(input, audio, { mode: 0o600 });
    const sox = options.soxBin ?? 'sox';
    const args = [
      '-q',
      input,
      '-r',
      String(SAMPLE_RATE),
      '-c',
      '1',
      '-b',
      '16',
      '-e',
      'signed-integer',
      wav16,
    ];
    const converted = await runProcess(sox, args, job.signal ? { signal: job.signal } : {});
    if (converted.code !== 0)
      throw new NodeError('invalid_request', {
        detail: 'The audio file could not be decoded (WAV, FLAC or Ogg).',
      });
    const duration = Math.max(0, (await stat(wav16)).size - WAV_HEADER_BYTES) / BYTES_PER_SECOND;
    const modelDir = options.modelDir ?? POCKETSPHINX_MODEL_DIR;
    const recognizer = [
      '-infile',
      wav16,
      '-hmm',
      path.join(modelDir, 'en-us'),
      '-dict',
      path.join(modelDir, 'cmudict-en-us.dict'),
      ...(options.grammarFile
        ? ['-jsgf', options.grammarFile]
        : ['-lm', path.join(modelDir, 'en-us.lm.bin')]),
      '-logfn',
      '/dev/null',
    ];
    const run = await runProcess(
      options.pocketsphinxBin ?? 'pocketsphinx_continuous',
      recognizer,
      job.signal ? { signal: job.signal } : {},
    );
    if (run.code !== 0) throw new NodeError('runtime_error', { detail: 'pocketsphinx failed.' });
    const text = run.stdout
      .toString('utf8')
      .split('\n')
      .map((line) => line.trim())
      .filter(Boolean)
      .join(' ');
    const seconds = Math.round(duration * 1000) / 1000;
    return {
      object: 'transcription',
      text,
      language: 'en',
      duration: seconds,
      segments: [{ start: 0, end: seconds, text }],
      usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, seconds },
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * A JSGF grammar whose one public rule is any of `phrases` (lower-cased; letters, digits,
 * apostrophes and spaces only), written to `file`. Every word must be in the model's dictionary,
 * else the recognizer can't load it: checked here, so a bad phrase fails at start, not per job.
 * @throws NodeError `config_invalid` naming the first word the dictionary lacks.
 */
export async function writePhraseGrammar(
  phrases: readonly string[],
  file: string,
  modelDir = POCKETSPHINX_MODEL_DIR,
): Promise<void> {
  const clean = phrases.map((p) =>
    p
      .toLowerCase()
      .replace(/[^a-z0-9' ]+/g, ' ')
      .trim()
      .replace(/\s+/g, ' '),
  );
  const list = [...new Set(clean.filter(Boolean))];
  if (list.length === 0) throw new NodeError('config_invalid', { detail: 'The phrase list is empty.' });
  const dictionary = new Set(
    (await readFile(path.join(modelDir, 'cmudict-en-us.dict'), 'utf8'))
      .split('\n')
      .map((l) => l.split(' ')[0]),
  );
  for (const word of list.flatMap((p) => p.split(' '))) {
    if (!dictionary.has(word))
      throw new NodeError('config_invalid', { detail: `"${word}" is not in the pocketsphinx dictionary.` });
  }
  await writeFile(file, `#JSGF V1.0;\ngrammar phrases;\npublic <phrase> = ${list.join(' | ')};\n`, {
    mode: 0o600,
  });
}
