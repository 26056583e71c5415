/**
 * A Postgres 15 cluster owned by the project: created once under a directory, on 127.0.0.1 only,
 * with pg_cron preloaded. As root, the server runs as the `postgres` system user (initdb refuses
 * root). Passwords use SCRAM; the superuser password lives in the git-ignored env file.
 */
import { join, resolve } from "node:path";

export const PG_BIN = "/usr/lib/postgresql/15/bin";
const isRoot = Deno.uid() === 0;

export interface ClusterOptions {
  dir: string;
  port: number;
  password: string;
  /** Trade durability for speed (test and benchmark clusters). */
  fast?: boolean;
  log?: (line: string) => void;
}

/** Runs a command, as `postgres` when we are root; throws with its output on failure. */
export async function run(
  cmd: string,
  args: string[],
  opts: { asPostgres?: boolean; env?: Record<string, string>; cwd?: string } = {},
) {
  const [bin, argv] = opts.asPostgres && isRoot
    ? ["runuser", ["-u", "postgres", "--", cmd, ...args]]
    : [cmd, args];
  const out = await new Deno.Command(bin, {
    args: argv,
    env: opts.env,
    cwd: opts.cwd,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  if (!out.success) throw new Error(`${cmd} ${args.join(" ")} failed (${out.code}):\n${text}`);
  return text;
}

/** Where Agora's settings begin in postgresql.conf (everything after it is Agora's). */
const SETTINGS_MARK = "\n# Agora\n";

export class Cluster {
  readonly dir: string;
  readonly dataDir: string;
  constructor(readonly opts: ClusterOptions) {
    this.dir = resolve(opts.dir);
    this.dataDir = join(this.dir, "data");
  }

  url(database = "postgres", user = "postgres", password = this.opts.password): string {
    return `postgresql://${user}:${
      encodeURIComponent(password)
    }@127.0.0.1:${this.opts.port}/${database}`;
  }

  async exists(): Promise<boolean> {
    try {
      await Deno.stat(join(this.dataDir, "PG_VERSION"));
      return true;
    } catch {
      return false;
    }
  }

  /** initdb with the settings Agora needs. Returns false when the cluster already existed. */
  async create(): Promise<boolean> {
    if (await this.exists()) return false;
    await Deno.mkdir(this.dataDir, { recursive: true });
    const pwfile = join(this.dir, ".pwfile");
    await Deno.writeTextFile(pwfile, this.opts.password + "\n", { mode: 0o600 });
    if (isRoot) await run("chown", ["-R", "postgres:postgres", this.dir]);
    try {
      await run(join(PG_BIN, "initdb"), [
        "-D",
        this.dataDir,
        "-U",
        "postgres",
        `--pwfile=${pwfile}`,
        "--auth-local=scram-sha-256",
        "--auth-host=scram-sha-256",
        "-E",
        "UTF8",
        "--locale=C.UTF-8",
      ], { asPostgres: true });
    } finally {
      await Deno.remove(pwfile).catch(() => {});
    }
    await this.writeSettings();
    return true;
  }

  /**
   * Agora's settings, the same for every cluster (the stack's, the tests', the benchmarks'), after
   * initdb's own in postgresql.conf (the later line wins).
   *
   * pg_cron runs each job in a background worker of the server (`cron.use_background_workers`)
   * instead of its default, a libpq connection to the server: that connection carries no
   * password, and pg_hba asks SCRAM of every connection, so every run failed with "connection
   * failed". A worker needs no pg_hba rule, so pg_hba stays strict. Background workers share
   * `max_worker_processes` (default 8) with pg_cron's launcher, parallel query (up to 8) and the
   * logical replication launcher; pg_cron caps its concurrent runs below that number (5 unless
   * `cron.max_running_jobs` says otherwise), and a run that finds no free slot waits for one.
   */
  settings(): string[] {
    return [
      "listen_addresses = '127.0.0.1'",
      `port = ${this.opts.port}`,
      `unix_socket_directories = '${this.dir}'`,
      "shared_preload_libraries = 'pg_cron'",
      "cron.database_name = 'postgres'",
      "cron.use_background_workers = on",
      "cron.max_running_jobs = 16",
      "max_worker_processes = 32",
      "max_connections = 200",
      "shared_buffers = 256MB",
      "timezone = 'UTC'",
      "log_min_messages = warning",
      ...(this.opts.fast
        ? ["fsync = off", "synchronous_commit = off", "full_page_writes = off"]
        : []),
    ];
  }

  /**
   * Writes `settings()` as the `# Agora` block at the end of postgresql.conf, replacing the block
   * an earlier version wrote, so a cluster made before a setting existed gets it at its next
   * start. Returns whether the file changed.
   */
  async writeSettings(): Promise<boolean> {
    const file = join(this.dataDir, "postgresql.conf");
    const text = await Deno.readTextFile(file);
    const at = text.indexOf(SETTINGS_MARK);
    const block = SETTINGS_MARK + this.settings().join("\n") + "\n";
    const next = (at >= 0 ? text.slice(0, at) : text) + block;
    if (next === text) return false;
    await Deno.writeTextFile(file, next);
    return true;
  }

  async running(): Promise<boolean> {
    try {
      await run(join(PG_BIN, "pg_ctl"), ["-D", this.dataDir, "status"], { asPostgres: true });
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Starts the server with the current settings; one already running is restarted when its
   * settings changed (pg_cron's and `max_worker_processes` take effect only at server start).
   */
  async start(): Promise<void> {
    const changed = await this.writeSettings();
    if (await this.running()) {
      if (changed) await this.restart();
      return;
    }
    await run(join(PG_BIN, "pg_ctl"), [
      "-D",
      this.dataDir,
      "-l",
      join(this.dir, "postgres.log"),
      "-w",
      "-t",
      "30",
      "start",
    ], {
      asPostgres: true,
    });
  }

  async restart(): Promise<void> {
    await run(join(PG_BIN, "pg_ctl"), [
      "-D",
      this.dataDir,
      "-l",
      join(this.dir, "postgres.log"),
      "-m",
      "fast",
      "-w",
      "-t",
      "30",
      "restart",
    ], { asPostgres: true });
  }

  async stop(): Promise<void> {
    if (!(await this.running())) return;
    await run(
      join(PG_BIN, "pg_ctl"),
      ["-D", this.dataDir, "-m", "fast", "-w", "-t", "30", "stop"],
      { asPostgres: true },
    );
  }

  /** Runs SQL files with psql, stopping at the first error. */
  async psqlFile(file: string, database = "postgres"): Promise<void> {
    await run("psql", ["-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", this.url(database), "-f", file]);
  }

  async psql(sql: string, database = "postgres"): Promise<string> {
    return await run("psql", [
      "-X",
      "-q",
      "-t",
      "-A",
      "-v",
      "ON_ERROR_STOP=1",
      "-d",
      this.url(database),
      "-c",
      sql,
    ]);
  }
}

/** Applies sql/local/ (the hosted-Supabase compatibility layer), every file in name order. */
export async function applyLocalLayer(cluster: Cluster, root: string): Promise<void> {
  const dir = join(root, "sql", "local");
  const files = [...Deno.readDirSync(dir)].filter((e) => e.name.endsWith(".sql")).map((e) => e.name)
    .sort();
  for (const file of files) await cluster.psqlFile(join(dir, file));
}

/** Applies supabase/migrations with the real Supabase CLI (`db push` against the URL). */
export async function pushMigrations(cluster: Cluster, root: string): Promise<string> {
  return await run(join(root, "node_modules", ".bin", "supabase"), [
    "db",
    "push",
    `--remote=${cluster.url()}`,
    "--yes",
    "--workdir",
    root,
  ], {
    cwd: root,
    env: { SUPABASE_YES: "1", DO_NOT_TRACK: "1", SUPABASE_TELEMETRY_DISABLED: "1" },
  });
}

/** Finds a free TCP port on loopback. */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}
