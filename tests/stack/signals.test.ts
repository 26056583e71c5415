/**
 * `npm start` as a process manager (systemd, `timeout`, a container runtime) stops it: SIGTERM
 * or SIGINT sent to npm's own pid, not to its process group. Everything under npm (the shell npm
 * runs the script with, deno, the extra server processes) and the database server must be gone
 * within a few seconds, even with an SSE stream and a long-poll open. The server's log must not
 * carry Deno's warning about `request.signal` (it comes from reading a request's abort signal).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "../../stack/postgres.ts";
import { expectJson, test } from "../support/helpers.ts";
import { portOpen } from "./stack-process.ts";
import { openSse } from "../realtime/sse-client.ts";

const ROOT = join(fileURLToPath(new URL("../..", import.meta.url)));
const STOP_WITHIN_MS = 8_000;

/** Every live process under `pid` (children, grandchildren...), read from /proc. */
async function descendants(pid: number): Promise<number[]> {
  const parents = new Map<number, number[]>();
  for await (const entry of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const stat = await Deno.readTextFile(`/proc/${entry.name}/stat`);
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      parents.set(ppid, [...(parents.get(ppid) ?? []), Number(entry.name)]);
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const child of parents.get(p) ?? []) {
      out.push(child);
      walk(child);
    }
  };
  walk(pid);
  return out;
}

/** Alive and not a zombie. */
async function alive(pid: number): Promise<boolean> {
  try {
    const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

async function signalScenario(signal: "SIGTERM" | "SIGINT", args: string[]) {
  const localDir = await Deno.makeTempDir({ prefix: "agora-signals-" });
  await Deno.chmod(localDir, 0o755); // the database server runs as the postgres user
  const port = freePort();
  const dbPort = freePort();
  const chainPort = freePort();
  const base = `http://localhost:${port}`;
  const child = new Deno.Command("npm", {
    args: ["start", "--", ...args],
    env: {
      ...Deno.env.toObject(),
      AGORA_LOCAL_DIR: localDir,
      AGORA_PORT: String(port),
      AGORA_DB_PORT: String(dbPort),
      AGORA_CHAIN_PORT: String(chainPort),
      AGORA_LOG_LEVEL: "warn",
      NO_COLOR: "1",
    },
    cwd: ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let output = "";
  const decoder = new TextDecoder();
  const pumps = [child.stdout, child.stderr].map(async (stream) => {
    for await (const chunk of stream) output += decoder.decode(chunk, { stream: true });
  });
  const postmasterPid = async () =>
    Number(
      (await Deno.readTextFile(join(localDir, "postgres", "data", "postmaster.pid"))).split(
        "\n",
      )[0],
    );
  let sse: Awaited<ReturnType<typeof openSse>> | null = null;
  let processes: number[] = [];
  try {
    const deadline = Date.now() + 90_000;
    while (!output.includes("Agora is running")) {
      if (Date.now() > deadline) throw new Error(`the stack did not start:\n${output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    // Sign in over HTTP, as a user would, then use SSE and long-polling.
    const sent = await fetch(`${base}/api/auth/signin`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ provider: "email", email: "member@example.com" }),
    });
    assert.equal(sent.status, 202);
    await sent.body?.cancel();
    const mail = await expectJson(await fetch(`${base}/_dev/mail?to=member@example.com`), 200);
    // The newest mail with a sign-in link: the seeded member's wallet is funded as the stack
    // starts, and that mail (no token in its link) may arrive after the sign-in's.
    const signInMail = mail.items.find((m: { links: string[] }) =>
      m.links.some((l) => new URL(l).searchParams.has("token"))
    );
    const token = new URL(
      signInMail.links.find((l: string) => new URL(l).searchParams.has("token")),
    ).searchParams.get("token");
    const verified = await fetch(`${base}/functions/v1/api/auth/verify`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ token }),
    });
    const session = await expectJson(verified, 200);
    const auth = { authorization: `Bearer ${session.accessToken}` };
    const topics = `user:${session.user.id}`;

    // A finished SSE stream, a finished long-poll, then a stream and a long-poll left open.
    const first = await openSse(`${base}/api/realtime/sse?topics=${topics}`, auth);
    assert.equal((await first.next(5_000))?.event, "ready");
    first.close();
    const poll = await fetch(`${base}/api/realtime/poll?topics=${topics}&timeout=1`, {
      headers: auth,
    });
    await expectJson(poll, 200);
    sse = await openSse(`${base}/api/realtime/sse?topics=${topics}`, auth);
    assert.equal((await sse.next(5_000))?.event, "ready");
    const pending = fetch(`${base}/api/realtime/poll?topics=${topics}&timeout=30`, {
      headers: auth,
    }).then((r) => r.body?.cancel()).catch(() => {});
    await new Promise((r) => setTimeout(r, 300));

    processes = await descendants(child.pid);
    const postmaster = await postmasterPid();
    assert.ok(processes.length >= 1, "npm runs the stack in child processes");
    assert.ok(await alive(postmaster), "the database server runs");

    // The signal goes to npm's pid alone, as `kill` or a process manager sends it.
    const started = Date.now();
    Deno.kill(child.pid, signal);
    const status = await Promise.race([
      child.status,
      new Promise<null>((r) => setTimeout(() => r(null), STOP_WITHIN_MS)),
    ]);
    const took = Date.now() - started;
    const left = [];
    for (const pid of processes) if (await alive(pid)) left.push(pid);
    if (status === null) {
      for (const pid of left) Deno.kill(pid, "SIGKILL");
    }
    assert.notEqual(status, null, `npm did not exit within ${STOP_WITHIN_MS} ms:\n${output}`);
    assert.deepEqual(left, [], "no process npm started is left");
    assert.equal(await alive(postmaster), false, "the database server is down");
    assert.equal(await portOpen(port), false, "the HTTP port is closed");
    assert.equal(await portOpen(dbPort), false, "the database port is closed");
    assert.equal(await portOpen(chainPort), false, "the chain's port is closed");
    assert.ok(took < STOP_WITHIN_MS, `stopped in ${took} ms`);
    await pending;
    await Promise.all(pumps);
    assert.match(output, /stopped: the database server and the chain are down/);
    assert.doesNotMatch(output, /request\.signal/, "no warning about request.signal in the log");
  } finally {
    sse?.close();
    // Whatever happened, leave no server behind.
    const known = [...processes, ...await descendants(child.pid).catch(() => [])];
    for (const pid of known) {
      try {
        Deno.kill(pid, "SIGKILL");
      } catch {
        // gone
      }
    }
    try {
      child.kill("SIGKILL");
    } catch {
      // gone
    }
    await child.status;
    const pm = await postmasterPid().catch(() => 0);
    if (pm && await alive(pm)) {
      await new Deno.Command("kill", { args: ["-QUIT", String(pm)] }).output();
    }
    await Deno.remove(localDir, { recursive: true }).catch(() => {});
  }
}

test("[stack] SIGTERM to npm's pid stops npm, deno and the database server, with SSE and long-poll open", async () => {
  await signalScenario("SIGTERM", []);
});

test("[stack] SIGINT to npm's pid stops every server process of --processes 2 and the database server", async () => {
  await signalScenario("SIGINT", ["--processes", "2"]);
});
