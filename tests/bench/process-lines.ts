/**
 * How benchmark processes talk: one JSON object per line over stdout/stdin pipes, read back line
 * by line. Shared by the messaging and realtime benchmarks.
 */

/** Reads JSON lines from a stream, one object per `next()`; null at the end. */
export function jsonLines(stream: ReadableStream<Uint8Array<ArrayBuffer>>) {
  const reader = stream.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  return {
    async next<T>(): Promise<T | null> {
      while (true) {
        const index = buffer.indexOf("\n");
        if (index >= 0) {
          const line = buffer.slice(0, index).trim();
          buffer = buffer.slice(index + 1);
          if (line) return JSON.parse(line) as T;
          continue;
        }
        const { value, done } = await reader.read();
        if (done) return null;
        buffer += value;
      }
    },
  };
}

const encoder = new TextEncoder();

/** Writes one JSON line to stdout, whole (a pipe may take a large line in several writes). */
export function writeLine(value: unknown): void {
  const bytes = encoder.encode(JSON.stringify(value) + "\n");
  let written = 0;
  while (written < bytes.length) written += Deno.stdout.writeSync(bytes.subarray(written));
}
