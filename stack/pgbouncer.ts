/**
 * PgBouncer (Debian's `pgbouncer`, installed by stack/run.sh for `test`) in front of a cluster:
 * the pooler a hosted project has in Supavisor, here for the tests that run the API through a
 * transaction-mode pooler (tests/core/pooler.test.ts). It listens on 127.0.0.1 only, on a port of
 * its own, with its configuration, password file and log in a temporary directory; clients sign
 * in with SCRAM as the cluster's user, and PgBouncer signs in to the cluster with the same
 * password. `stop()` ends it (immediate shutdown) and removes the directory.
 */
import { join } from "node:path";
import { freePort, run } from "./postgres.ts";

export const PGBOUNCER_BIN = "/usr/sbin/pgbouncer";
const isRoot = Deno.uid() === 0;

export interface PgBouncerOptions {
  /** The cluster's URL (`postgresql://user:password@127.0.0.1:port/database`). */
  target: string;
  /** `transaction` (Supavisor's port 6543) or `session` (its port 5432). */
  poolMode?: "transaction" | "session";
  /** Server connections per user and database (`default_pool_size`). */
  poolSize?: number;
  /** Client connections PgBouncer accepts (`max_client_conn`). */
  maxClients?: number;
}

export interface PgBouncer {
  port: number;
  /** The URL a client uses: the target's user, password and database, PgBouncer's port. */
  url: string;
  /** Runs one command on PgBouncer's admin console (`SHOW POOLS`, …): rows as objects. */
  admin(command: string): Promise<Record<string, string>[]>;
  /** Its log so far. */
  log(): Promise<string>;
  stop(): Promise<void>;
}

/** A value in PgBouncer's password file: in double quotes, a quote doubled. */
const quoted = (value: string) => `"${value.replaceAll('"', '""')}"`;

export async function startPgBouncer(opts: PgBouncerOptions): Promise<PgBouncer> {
  const target = new URL(opts.target);
  const user = decodeURIComponent(target.username);
  const password = decodeURIComponent(target.password);
  const database = target.pathname.slice(1) || "postgres";
  const port = freePort();
  const dir = await Deno.makeTempDir({ prefix: "agora-pgbouncer-" });
  const ini = join(dir, "pgbouncer.ini");
  const logFile = join(dir, "pgbouncer.log");
  await Deno.writeTextFile(join(dir, "userlist.txt"), `${quoted(user)} ${quoted(password)}\n`, {
    mode: 0o600,
  });
  await Deno.writeTextFile(
    ini,
    [
      "[databases]",
      `${database} = host=${target.hostname} port=${target.port} dbname=${database}`,
      "",
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${port}`,
      // No Unix socket: only the TCP port on loopback.
      "unix_socket_dir =",
      "auth_type = scram-sha-256",
      `auth_file = ${join(dir, "userlist.txt")}`,
      `admin_users = ${user}`,
      `pool_mode = ${opts.poolMode ?? "transaction"}`,
      `default_pool_size = ${opts.poolSize ?? 3}`,
      "min_pool_size = 0",
      "reserve_pool_size = 0",
      `max_client_conn = ${opts.maxClients ?? 200}`,
      `logfile = ${logFile}`,
      "log_connections = 0",
      "log_disconnections = 0",
      "",
    ].join("\n"),
  );
  // PgBouncer refuses to run as root: as root it runs as `postgres`, which must read its files.
  if (isRoot) await run("chown", ["-R", "postgres:postgres", dir]);
  const child = new Deno.Command(PGBOUNCER_BIN, {
    args: [...(isRoot ? ["-u", "postgres"] : []), ini],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  let exited = false;
  const status = child.status.then((s) => {
    exited = true;
    return s;
  });
  const readLog = () => Deno.readTextFile(logFile).catch(() => "");
  const remove = () => Deno.remove(dir, { recursive: true }).catch(() => {});

  const stop = async () => {
    if (!exited) {
      try {
        child.kill("SIGTERM"); // immediate shutdown: clients are cut off
      } catch {
        // already gone
      }
    }
    await status;
    await remove();
  };

  // Ready when it accepts a connection on its port.
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (exited) {
      const text = await readLog();
      await remove();
      throw new Error(`pgbouncer exited at start:\n${text}`);
    }
    try {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port });
      conn.close();
      break;
    } catch {
      if (Date.now() > deadline) {
        const text = await readLog();
        await stop();
        throw new Error(`pgbouncer did not listen on ${port} within 10 s:\n${text}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  const url = new URL(opts.target);
  url.port = String(port);
  return {
    port,
    url: url.toString(),
    async admin(command) {
      // The admin console speaks the simple query protocol only: psql, unaligned, with headers.
      const text = await run("psql", [
        "-X",
        "-q",
        "-A",
        "-F",
        "\t",
        "-P",
        "footer=off",
        "-h",
        "127.0.0.1",
        "-p",
        String(port),
        "-U",
        user,
        "-d",
        "pgbouncer",
        "-c",
        command,
      ], { env: { PGPASSWORD: password } });
      const [header, ...lines] = text.trimEnd().split("\n");
      const names = header.split("\t");
      return lines.map((line) => {
        const values = line.split("\t");
        return Object.fromEntries(names.map((name, i) => [name, values[i] ?? ""]));
      });
    },
    log: readLog,
    stop,
  };
}
