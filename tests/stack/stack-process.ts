/**
 * `npm start` as a user runs it, for the stack tests: the CLI in its own process, on its own
 * ports (HTTP, database and chain) and data directory; stopped with Ctrl-C (SIGINT).
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "../../stack/postgres.ts";

export const ROOT = join(fileURLToPath(new URL("../..", import.meta.url)));

export interface Running {
  child: Deno.ChildProcess;
  output: () => string;
}

export interface StackPorts {
  port: number;
  dbPort: number;
  /** The chain's port (AGORA_CHAIN_PORT); a free one when omitted. */
  chainPort?: number;
}

export async function startStack(
  localDir: string,
  ports: StackPorts,
  args: string[] = [],
): Promise<Running> {
  const env: Record<string, string> = {
    ...Deno.env.toObject(),
    AGORA_LOCAL_DIR: localDir,
    AGORA_PORT: String(ports.port),
    AGORA_DB_PORT: String(ports.dbPort),
    AGORA_CHAIN_PORT: String(ports.chainPort ?? freePort()),
    AGORA_LOG_LEVEL: "warn",
    NO_COLOR: "1",
  };
  const child = new Deno.Command("deno", {
    args: ["run", "--allow-all", "--quiet", join(ROOT, "stack", "cli.ts"), "start", ...args],
    env,
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let output = "";
  const decoder = new TextDecoder();
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    for await (const chunk of stream) output += decoder.decode(chunk, { stream: true });
  };
  void pump(child.stdout);
  void pump(child.stderr);
  const deadline = Date.now() + 90_000;
  while (!output.includes("Agora is running")) {
    if (Date.now() > deadline) throw new Error(`the stack did not start:\n${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { child, output: () => output };
}

export async function stopStack(running: Running): Promise<Deno.CommandStatus> {
  running.child.kill("SIGINT");
  return await running.child.status;
}

export async function portOpen(port: number): Promise<boolean> {
  try {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    conn.close();
    return true;
  } catch {
    return false;
  }
}

/**
 * The stack's settings: the generated file, overridden by this process's environment (as
 * loadLocalEnv does), which the test runner fills with its own secrets.
 */
export async function stackSettings(localDir: string): Promise<Record<string, string>> {
  const stored = Object.fromEntries(
    (await Deno.readTextFile(join(localDir, "agora.env"))).split("\n").filter((l) =>
      l.includes("=")
    ).map((l) => {
      const i = l.indexOf("=");
      return [l.slice(0, i), l.slice(i + 1)];
    }),
  );
  return { ...stored, ...Deno.env.toObject() };
}
