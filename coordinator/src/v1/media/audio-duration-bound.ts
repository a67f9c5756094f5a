/**
 * The longest an audio file can play, seconds, as the coordinator bounds a node's claim
 * (NODE_PROTOCOL.md §9 "Units and prices"): a WAV file's data bytes present over its header's
 * byte rate; any other container at most one second per MIN_AUDIO_BYTES_PER_SECOND bytes (6 kbit/s,
 * below any speech codec in use).
 */
export const MIN_AUDIO_BYTES_PER_SECOND = 750;

export function audioDurationBound(file: Buffer): { seconds: number; wav: boolean } {
  const wav = wavDuration(file);
  if (wav !== undefined) return { seconds: wav, wav: true };
  return { seconds: file.length / MIN_AUDIO_BYTES_PER_SECOND, wav: false };
}

/** A RIFF/WAVE file's playing time from its `fmt ` byte rate and the `data` bytes present; undefined if not one. */
function wavDuration(file: Buffer): number | undefined {
  if (file.length < 12 || file.toString('ascii', 0, 4) !== 'RIFF' || file.toString('ascii', 8, 12) !== 'WAVE')
    return undefined;
  let byteRate: number | undefined;
  for (let at = 12; at + 8 <= file.length; ) {
    const id = file.toString('ascii', at, at + 4);
    const size = file.readUInt32LE(at + 4);
    const body = at + 8;
    if (id === 'fmt ' && body + 12 <= file.length) byteRate = file.readUInt32LE(body + 8);
    if (id === 'data') {
      if (!byteRate) return undefined;
      // A streamed WAV says 0x7fffffff: only the bytes present count.
      const present = Math.min(size, file.length - body);
      return present / byteRate;
    }
    at = body + size + (size % 2);
  }
  return undefined;
}
