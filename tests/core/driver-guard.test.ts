/**
 * `guardDriverFaults` (functions/_shared/db.ts), in a process of its own: the driver's
 * write-after-close TypeError thrown from a timer, and a connection's end that reached a promise
 * nobody awaited, are logged and the process lives on; any other uncaught error still ends it.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { test } from "../support/helpers.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const DB = join(ROOT, "functions/_shared/db.ts");

async function runScript(body: string) {
  const dir = await Deno.makeTempDir({ prefix: "agora-guard-" });
  const file = join(dir, "script.ts");
  await Deno.writeTextFile(
    file,
    `import { guardDriverFaults } from ${JSON.stringify(DB)};
import { setImmediate } from "node:timers";
guardDriverFaults((level, msg) => console.log(level, msg));
${body}
setTimeout(() => console.log("alive"), 200);
`,
  );
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-all", "--quiet", "--config", join(ROOT, "deno.json"), file],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    return { code: out.code, stdout: new TextDecoder().decode(out.stdout) + stderr };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

test("[core] the driver's write after close and an unawaited connection end do not end the process", async () => {
  const result = await runScript(`
// postgres.js's nextWrite, as its stack names it, on a socket already gone
function nextWrite() { const socket: { write(x: number): void } | null = null; socket!.write(1); }
Object.defineProperty(nextWrite, "name", { value: "nextWrite" });
setImmediate(() => { try { nextWrite(); } catch (e) {
  (e as Error).stack += "\\n    at Immediate.nextWrite (file:///x/node_modules/postgres/src/connection.js:255:22)";
  throw e;
} });
Promise.reject(Object.assign(new Error("This socket has been ended by the other party"), { code: "EPIPE" }));
`);
  assert.equal(result.code, 0, result.stdout);
  assert.match(
    result.stdout,
    /error database driver: a write after its connection closed was dropped/,
  );
  assert.match(result.stdout, /warn database: a connection ended under a promise nobody awaited/);
  assert.match(result.stdout, /alive/);
});

test("[core] any other uncaught error still ends the process", async () => {
  for (
    const body of [
      `setImmediate(() => { throw new TypeError("a bug of ours"); });`,
      `Promise.reject(new Error("a bug of ours"));`,
    ]
  ) {
    const result = await runScript(body);
    assert.notEqual(result.code, 0, `${body} ended the process`);
    assert.match(result.stdout, /a bug of ours/, "it ended with that error, not another");
    assert.doesNotMatch(result.stdout, /alive/);
  }
});
