/**
 * /api/realtime: the event log over SSE (with Last-Event-ID resume and heartbeats) and
 * long-polling. Topics are authorized by the one SQL topic rule (`app.can_read_topic`); a topic
 * the caller may not read is 403. Both transports deliver in log order, once: history is read
 * through RLS from the caller's cursor, live events come from the process's event hub, and the
 * overlap between the two is dropped by cursor order. Any signed-in user (the gate below); the
 * topic rule decides the rest. Queries: realtime/realtime.queries.ts and realtime/events.ts.
 */
import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv, SessionUser } from "../core/context.ts";
import { errors, json, router, signedIn } from "../core/openapi.ts";
import { badRequest, forbidden } from "../../_shared/errors.ts";
import { requireSignIn } from "../core/middleware/roles.ts";
import { refusedTopics } from "./realtime.queries.ts";
import { asClaims, asUser, claimsOf, serverSql } from "../core/doors.ts";
import { compareCursors, type Cursor, formatCursor, parseCursor } from "./cursor.ts";
import { currentCursor, readEvents, type RealtimeEvent } from "./events.ts";
import type { HubSubscriber } from "./hub.ts";
import { loadSessionUser } from "../auth/sessions.ts";

export const realtime = router();

realtime.use("*", requireSignIn());

const PAGE = 500;
const MAX_TOPICS = 20;

const topicsParam = z.string().min(1).max(4_000).openapi({
  description: "Comma-separated topics: conversation:<id>, user:<id>, admin",
  example:
    "conversation:5b1f0c3e-8a51-4d8f-9d0a-2f1b6b0c9a11,user:0c8e3c1a-5a4e-4b7e-9f51-1f0e2b9c7d22",
});

const eventSchema = z.object({
  id: z.string().openapi({
    description: "The event's cursor; ephemeral events have ids starting with `ephemeral.`",
  }),
  topic: z.string(),
  event: z.string(),
  payload: z.unknown(),
  createdAt: z.string(),
}).openapi("RealtimeEvent");

function parseTopics(text: string): string[] {
  const topics = [...new Set(text.split(",").map((t) => t.trim()).filter(Boolean))];
  if (!topics.length || topics.length > MAX_TOPICS || topics.some((t) => t.length > 200)) {
    throw badRequest(`Give 1 to ${MAX_TOPICS} topics.`, [{
      path: "topics",
      message: "comma-separated topics",
    }]);
  }
  return topics;
}

/** 403 unless the caller may read every one of `topics`; the caller. */
async function authorize(c: Context<AppEnv>, topics: string[]): Promise<SessionUser> {
  const refused = await asUser(c, (tx) => refusedTopics(tx, topics));
  if (refused.length) throw forbidden(`You may not read ${refused.join(", ")}.`);
  return c.get("user")!;
}

const envelope = (e: RealtimeEvent): RealtimeEvent => ({
  id: e.id,
  topic: e.topic,
  event: e.event,
  payload: e.payload,
  createdAt: e.createdAt,
});

/**
 * Whether this event ends the user's access to one of the stream's topics (they were removed
 * from, or left, a conversation being streamed). The stream then closes at once, before any later
 * event of that conversation can be written; a reconnect is authorized afresh.
 */
function endsAccess(e: RealtimeEvent, user: SessionUser, topics: readonly string[]): boolean {
  const payload = e.payload as { userId?: string; conversationId?: string } | null;
  if (payload?.userId !== user.id) return false;
  if (e.event !== "participant.removed" && e.event !== "conversation.left") return false;
  return topics.includes(`conversation:${payload.conversationId}`);
}

// GET /api/realtime/sse ------------------------------------------------------------------------

realtime.openapi(
  createRoute({
    method: "get",
    path: "/sse",
    operationId: "streamEvents",
    summary: "Server-Sent Events for topics",
    description: "Frames carry `id:` (the resume cursor), `event:` (the event name) and `data:` " +
      "(the event as JSON). Reconnect with `Last-Event-ID` (or `lastEventId`) to resume without " +
      "loss or repetition. The first frame, `ready`, carries the starting cursor. Comment lines " +
      "are heartbeats. Typing events are live only and carry no `id:`.",
    security: signedIn,
    request: {
      query: z.object({ topics: topicsParam, lastEventId: z.string().max(64).optional() }),
      headers: z.object({ "last-event-id": z.string().max(64).optional() }),
    },
    responses: {
      200: {
        description: "An event stream",
        content: { "text/event-stream": { schema: z.string() } },
      },
      ...errors(400, 401, 403),
    },
  }),
  async (c) => {
    const deps = c.get("deps");
    const q = c.req.valid("query");
    const topics = parseTopics(q.topics);
    const resumeFrom = c.req.header("last-event-id") || q.lastEventId;
    const start = resumeFrom ? parseCursor(resumeFrom, "Last-Event-ID") : null;
    const user = await authorize(c, topics);
    const encoder = new TextEncoder();

    let last: Cursor = start ?? await currentCursor(serverSql(deps, "event cursor"));
    let closed = false;
    let unsubscribe: (() => void) | null = null;
    let heartbeat: ReturnType<typeof setInterval> | undefined;
    let backlogDone = false;
    const buffered: (RealtimeEvent & { cursor: Cursor })[] = [];

    const stream = new ReadableStream<Uint8Array>({
      async start(controller) {
        const write = (text: string) => {
          if (closed) return;
          try {
            controller.enqueue(encoder.encode(text));
          } catch {
            close();
          }
        };
        const close = () => {
          if (closed) return;
          closed = true;
          unsubscribe?.();
          if (heartbeat !== undefined) clearInterval(heartbeat);
          try {
            controller.close();
          } catch {
            // already closed by the client
          }
        };
        /**
         * Closes the stream when the session or any topic is no longer readable. It outlives
         * its request's middleware, so it reads the session again and runs with those claims.
         */
        const recheck = async () => {
          try {
            const alive = await loadSessionUser(deps, user.sessionId, user.id);
            const refused = alive
              ? await asClaims(deps, claimsOf(alive), (tx) => refusedTopics(tx, topics))
              : topics;
            if (refused.length) close();
          } catch {
            // a passing database error: the next heartbeat checks again
          }
        };
        const send = (e: RealtimeEvent & { cursor: Cursor }) => {
          if (compareCursors(e.cursor, last) <= 0) return;
          last = e.cursor;
          write(`id: ${e.id}\nevent: ${e.event}\ndata: ${JSON.stringify(envelope(e))}\n\n`);
          if (endsAccess(e, user, topics)) close();
        };
        const subscriber: HubSubscriber = {
          topics: new Set(topics),
          durable: (e) => (backlogDone ? send(e) : buffered.push(e)),
          ephemeral: (e) => write(`event: ${e.event}\ndata: ${JSON.stringify(envelope(e))}\n\n`),
          closed: close,
        };
        write(
          `retry: 2000\nid: ${formatCursor(last)}\nevent: ready\ndata: ${
            JSON.stringify({ cursor: formatCursor(last), topics })
          }\n\n`,
        );
        try {
          unsubscribe = await deps.hub.subscribe(subscriber);
          let page;
          do {
            page = await asUser(c, (tx) => readEvents(tx, last, PAGE, topics));
            for (const e of page.events) send(e);
          } while (page.more && !closed);
          backlogDone = true;
          for (const e of buffered.splice(0)) send(e);
        } catch (err) {
          deps.log("error", "sse backlog failed", {
            requestId: c.get("requestId"),
            error: String(err),
          });
          close();
          return;
        }
        heartbeat = setInterval(() => {
          write(`: ${Date.now()}\n\n`);
          void recheck();
        }, deps.settings.sseHeartbeatMs);
      },
      cancel() {
        closed = true;
        unsubscribe?.();
        if (heartbeat !== undefined) clearInterval(heartbeat);
      },
    });

    // Through the context, so the headers the middleware prepared (request id, security) go too.
    return c.body(stream, 200, {
      "Content-Type": "text/event-stream; charset=utf-8",
      "Cache-Control": "no-cache, no-transform",
      "Connection": "keep-alive",
      "X-Accel-Buffering": "no",
    });
  },
);

// GET /api/realtime/poll -----------------------------------------------------------------------

realtime.openapi(
  createRoute({
    method: "get",
    path: "/poll",
    operationId: "pollEvents",
    summary: "Long-poll for events after a cursor",
    description: "Answers at once when events wait after `cursor`, else holds up to `timeout` " +
      "seconds (at most 30) for the next one. Without `cursor`, starts from now. Always answers " +
      "the cursor to send next time. Typing events seen while waiting are included; they do not " +
      "move the cursor.",
    security: signedIn,
    request: {
      query: z.object({
        topics: topicsParam,
        cursor: z.string().max(64).optional(),
        timeout: z.coerce.number().int().min(0).max(30).default(25),
      }),
    },
    responses: {
      200: json(
        z.object({ events: z.array(eventSchema), cursor: z.string() }),
        "Events, possibly none",
      ),
      ...errors(400, 401, 403),
    },
  }),
  async (c) => {
    const deps = c.get("deps");
    const q = c.req.valid("query");
    const topics = parseTopics(q.topics);
    const from = q.cursor ? parseCursor(q.cursor) : null;
    await authorize(c, topics);
    const cursor = from ?? await currentCursor(serverSql(deps, "event cursor"));

    // Subscribe before reading, so an event committed between the read and the wait wakes us.
    let wake: (() => void) | null = null;
    let woke = false;
    let done = false;
    const ephemeral: RealtimeEvent[] = [];
    const signal = () => {
      woke = true;
      wake?.();
    };
    const stop = () => {
      done = true;
      signal();
    };
    // The process stops: answer now. A client that leaves is not watched for (request.signal):
    // Deno's Deno.serve also aborts that signal after every successful response, and warns in
    // the log whenever it is read; the wait ends at its timeout (at most 30 s) instead.
    const unsubscribe = await deps.hub.subscribe({
      topics: new Set(topics),
      durable: signal,
      ephemeral: (e) => {
        ephemeral.push(envelope(e));
        signal();
      },
      closed: stop,
    });
    try {
      const deadline = Date.now() + q.timeout * 1000;
      while (true) {
        woke = false;
        const page = await asUser(c, (tx) => readEvents(tx, cursor, PAGE, topics));
        if (page.events.length || ephemeral.length) {
          const events = [...page.events.map(envelope), ...ephemeral];
          const next = page.events.length ? page.events[page.events.length - 1].cursor : cursor;
          return c.json({ events, cursor: formatCursor(next) }, 200);
        }
        const remaining = deadline - Date.now();
        if (remaining <= 0 || done) {
          return c.json({ events: [], cursor: formatCursor(cursor) }, 200);
        }
        if (!woke) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, remaining);
            wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
          wake = null;
        }
      }
    } finally {
      unsubscribe();
    }
  },
);
