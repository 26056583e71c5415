/**
 * A minimal SSE reader for tests: fetches a stream, parses frames (`id:`, `event:`, `data:`,
 * comments) as a browser's EventSource would, and hands them over one by one; and the topic's
 * event log after a cursor, which a resuming reader must receive exactly.
 */
import type { Sql } from "../../functions/_shared/db.ts";
export interface SseFrame {
  id?: string;
  event: string;
  data: string;
}

export interface SseStream {
  response: Response;
  /** The next frame, or null when the stream ended or `timeoutMs` passed. */
  next(timeoutMs?: number): Promise<SseFrame | null>;
  close(): void;
}

export async function openSse(
  url: string,
  headers: Record<string, string> = {},
): Promise<SseStream> {
  const controller = new AbortController();
  const response = await fetch(url, {
    headers: { accept: "text/event-stream", ...headers },
    signal: controller.signal,
  });
  const frames: SseFrame[] = [];
  const waiters: (() => void)[] = [];
  let ended = false;
  if (response.ok && response.body) {
    (async () => {
      const decoder = new TextDecoder();
      let buffer = "";
      try {
        for await (const chunk of response.body!) {
          buffer += decoder.decode(chunk, { stream: true });
          let index;
          while ((index = buffer.indexOf("\n\n")) >= 0) {
            const block = buffer.slice(0, index);
            buffer = buffer.slice(index + 2);
            const frame: SseFrame = { event: "message", data: "" };
            let hasData = false;
            for (const line of block.split("\n")) {
              if (line.startsWith(":")) continue;
              const [field, ...rest] = line.split(":");
              const value = rest.join(":").replace(/^ /, "");
              if (field === "id") frame.id = value;
              else if (field === "event") frame.event = value;
              else if (field === "data") {
                frame.data += (hasData ? "\n" : "") + value;
                hasData = true;
              }
            }
            if (hasData) frames.push(frame);
            waiters.splice(0).forEach((w) => w());
          }
        }
      } catch {
        // aborted
      } finally {
        ended = true;
        waiters.splice(0).forEach((w) => w());
      }
    })();
  } else {
    ended = true;
  }
  return {
    response,
    async next(timeoutMs = 5_000) {
      const deadline = Date.now() + timeoutMs;
      while (!frames.length && !ended) {
        const remaining = deadline - Date.now();
        if (remaining <= 0) return null;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, remaining);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      return frames.shift() ?? null;
    },
    close() {
      controller.abort();
    },
  };
}

/** The topic's events after `cursor` (`xid.id`), in order: what a resuming subscriber must get. */
export async function topicEventsAfter(sql: Sql, topic: string, cursor: string): Promise<string[]> {
  const [xid, id] = cursor.split(".");
  const rows = await sql<{ cursor: string }[]>`
    select xid::text || '.' || id::text as cursor from app.events
    where topic = ${topic} and (xid, id) > (${xid}::text::xid8, ${id}::bigint)
    order by xid, id`;
  return rows.map((r) => r.cursor);
}
