import type { TranscriptionFormat } from '@gpumesh/protocol';
import { ApiError } from '../../errors.js';

type Segment = { start: number; end: number; text: string };

/**
 * A node's transcription (the verbose shape, NODE_PROTOCOL.md §9) as the client asked for it:
 * `json` ({ text, usage }), `verbose_json` (task, language, duration, text, segments, usage),
 * or `text`, `srt`, `vtt` as plain text. Usage is OpenAI's duration usage — the seconds billed — with
 * our `cost` beside it. A node answer without text is a provider error.
 */
export function renderTranscription(
  response: Record<string, unknown> & { usage: { prompt_tokens: number; cost: number } },
  format: TranscriptionFormat,
  kind: 'transcription' | 'translation',
): Record<string, unknown> | string {
  const text = response.text;
  if (typeof text !== 'string') throw new ApiError('provider_error', 'The provider answered without text.');
  const seconds = response.usage.prompt_tokens / 1000;
  const usage = { type: 'duration', seconds, cost: response.usage.cost };
  const duration = typeof response.duration === 'number' ? response.duration : seconds;
  const segments: Segment[] = Array.isArray(response.segments)
    ? (response.segments as Partial<Segment>[]).map((s) => ({
        start: Number(s.start) || 0,
        end: Number(s.end) || 0,
        text: String(s.text ?? ''),
      }))
    : [{ start: 0, end: duration, text }];
  switch (format) {
    case 'json':
      return { text, usage };
    case 'verbose_json':
      return {
        task: kind === 'translation' ? 'translate' : 'transcribe',
        language: typeof response.language === 'string' ? response.language : 'unknown',
        duration,
        text,
        segments: segments.map((s, id) => ({ id, ...s })),
        usage,
      };
    case 'text':
      return text;
    case 'srt':
      return segments
        .map((s, i) => `${i + 1}\n${stamp(s.start, ',')} --> ${stamp(s.end, ',')}\n${s.text.trim()}\n`)
        .join('\n');
    case 'vtt':
      return `WEBVTT\n\n${segments.map((s) => `${stamp(s.start, '.')} --> ${stamp(s.end, '.')}\n${s.text.trim()}\n`).join('\n')}`;
  }
}

/** hh:mm:ss,mmm (SRT) or hh:mm:ss.mmm (WebVTT). */
function stamp(seconds: number, separator: string): string {
  const ms = Math.round(seconds * 1000);
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor(ms / 60_000) % 60;
  const s = Math.floor(ms / 1000) % 60;
  return `${pad(h)}:${pad(m)}:${pad(s)}${separator}${pad(ms % 1000, 3)}`;
}
