/**
 * How benchmark processes talk: one JSON object per line over stdout/stdin pipes, read back line
 * by line, and `Child`, the benchmark's end of such a process. Shared by the messaging and realtime
 * benchmarks.
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

// The benchmark's side -------------------------------------------------------------------------

/** The repository's root, where the children run. */
const ROOT = new URL("../..", import.meta.url).pathname;
const children = new Set<Child>();

/** A script of this directory in a process of its own, talking JSON lines over its pipes. */
export class Child {
  readonly proc: Deno.ChildProcess;
  private readonly out: ReturnType<typeof jsonLines>;
  private readonly writer: WritableStreamDefaultWriter<Uint8Array>;

  /**
   * `deno run` on one of this directory's scripts, through bash so that the soft open-file limit
   * can be raised to the hard one first (`exec` keeps the pid: it is the script's own).
   */
  constructor(
    readonly name: string,
    script: string,
    opts: { allowAll?: boolean; env?: Record<string, string>; v8Flags?: string[] } = {},
  ) {
    const deno = [
      Deno.execPath(),
      "run",
      "--quiet",
      ...(opts.allowAll ? ["--allow-all"] : ["--allow-net=127.0.0.1"]),
      ...(opts.v8Flags?.length ? [`--v8-flags=${opts.v8Flags.join(",")}`] : []),
      new URL(`./${script}`, import.meta.url).pathname,
    ];
    this.proc = new Deno.Command("bash", {
      args: ["-c", 'ulimit -n "$(ulimit -Hn)" 2>/dev/null; exec "$@"', "bash", ...deno],
      cwd: ROOT,
      env: opts.env,
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    this.out = jsonLines(this.proc.stdout);
    this.writer = this.proc.stdin.getWriter();
    children.add(this);
  }

  get pid(): number {
    return this.proc.pid;
  }

  async send(value: unknown): Promise<void> {
    await this.writer.write(encoder.encode(JSON.stringify(value) + "\n"));
  }

  /** Closes its stdin: nothing more will be sent. */
  async closeInput(): Promise<void> {
    await this.writer.close().catch(() => {});
  }

  /** The next line, or null once its stdout ended; an error after `ms`. */
  async nextOrEnd<T>(ms: number, what = "an answer"): Promise<T | null> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`${this.name}: no ${what} within ${ms / 1000} s`)),
        ms,
      );
    });
    try {
      return await Promise.race([this.out.next<T>(), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** The next line, or an error after `ms` or if the process ended. */
  async next<T>(ms: number, what = "an answer"): Promise<T> {
    const line = await this.nextOrEnd<T>(ms, what);
    if (line === null) throw new Error(`${this.name} ended without ${what} (see above)`);
    return line;
  }

  async ask<T>(value: unknown, ms = 30_000): Promise<T> {
    await this.send(value);
    return await this.next<T>(ms);
  }

  /** Its exit, once it has ended on its own. */
  async exited(): Promise<Deno.CommandStatus> {
    const status = await this.proc.status;
    children.delete(this);
    return status;
  }

  /** Asks it to stop with `command` (if given), then waits; killed after 10 s. */
  async stop(command?: unknown): Promise<void> {
    if (command !== undefined) await this.send(command).catch(() => {});
    await this.closeInput();
    const timer = setTimeout(() => this.kill(), 10_000);
    await this.exited();
    clearTimeout(timer);
  }

  kill(): void {
    try {
      this.proc.kill("SIGKILL");
    } catch {
      // already gone
    }
  }
}

/** Kills every child still running (a run that stopped, or was interrupted). */
export function killChildren(): void {
  for (const child of children) child.kill();
  children.clear();
}
