/**
 * The ceiling of the realtime benchmark (tests/bench/realtime.ts): a bare WebSocket broadcast
 * loop in a process of its own, with nothing of the gateway's work: no database, no JWT, no
 * authorization, no JSON on the hot path. A subscriber sends a Realtime 2.0.0 `phx_join` (answered
 * `ok` at once, so the same clients serve both runs); the publisher sends kind-4 frames over its
 * own WebSocket, and each is forwarded, bytes unchanged, to the connections joined to its topic.
 *
 * Prints `{"ready":true,"port":...}` once listening on 127.0.0.1; answers `stats` and `stop` on
 * stdin, one JSON line each.
 */
import { jsonLines, kind4Topic, writeLine } from "./realtime-shared.ts";

const topics = new Map<string, Set<WebSocket>>();
let connections = 0;
let forwarded = 0;

function handle(request: Request): Response {
  if (request.headers.get("upgrade")?.toLowerCase() !== "websocket") {
    return new Response("WebSocket only", { status: 400 });
  }
  const { socket, response } = Deno.upgradeWebSocket(request, { idleTimeout: 0 });
  socket.binaryType = "arraybuffer";
  const joined: string[] = [];
  connections++;
  socket.onmessage = (event) => {
    if (typeof event.data !== "string") {
      // The broadcast loop: one lookup, one send per subscriber.
      const bytes = new Uint8Array(event.data as ArrayBuffer);
      const topic = kind4Topic(bytes);
      const subscribers = topic === null ? undefined : topics.get(topic);
      if (!subscribers) return;
      for (const ws of subscribers) {
        if (ws.readyState === WebSocket.OPEN) {
          ws.send(bytes);
          forwarded++;
        }
      }
      return;
    }
    const [joinRef, ref, topic, name] = JSON.parse(event.data);
    if (name === "phx_join") {
      let subscribers = topics.get(topic);
      if (!subscribers) topics.set(topic, subscribers = new Set());
      subscribers.add(socket);
      joined.push(topic);
    }
    socket.send(JSON.stringify([joinRef, ref, topic, "phx_reply", { status: "ok", response: {} }]));
  };
  socket.onclose = () => {
    connections--;
    for (const topic of joined) topics.get(topic)?.delete(socket);
  };
  socket.onerror = () => {};
  return response;
}

const server = Deno.serve({
  hostname: "127.0.0.1",
  port: 0,
  onListen: ({ port }) => writeLine({ ready: true, port, pid: Deno.pid }),
}, handle);

const input = jsonLines(Deno.stdin.readable);
while (true) {
  const command = await input.next<{ cmd: string }>();
  if (!command || command.cmd === "stop") break;
  writeLine({ connections, forwarded, rssBytes: Deno.memoryUsage().rss });
}
await Promise.race([
  server.shutdown().catch(() => {}),
  new Promise((resolve) => setTimeout(resolve, 5_000)),
]);
writeLine({ stopped: true });
Deno.exit(0);
