/**
 * `npm run wallet-keys -- <status|rotate|new-key>`: the operator's side of the wallets' master
 * key (docs/wallet.md, "Rotating the master key").
 *
 *   status            wallets per master key id, and the id of AGORA_WALLET_MASTER_KEY
 *   rotate            re-seals every data key not sealed by AGORA_WALLET_MASTER_KEY, opening
 *                     them with AGORA_WALLET_PREVIOUS_MASTER_KEYS; safe to run again
 *   rotate --new-key  local stack only: generates a new key into .local/agora.env (the old one
 *                     moves to AGORA_WALLET_PREVIOUS_MASTER_KEYS), then rotates
 *   new-key           prints a new master key (32 random bytes, base64url)
 *
 * The database is AGORA_DB_URL when set (hosted: a direct connection), else the local stack's
 * cluster (started for the command if it is not running, and stopped again).
 */
import { join } from "node:path";
import postgres from "postgres";
import { Cluster } from "./postgres.ts";
import { loadLocalEnv, updateLocalEnv } from "./local-env.ts";
import { ROOT } from "./database.ts";
import { randomToken } from "../functions/_shared/crypto.ts";
import { parseMasterKey } from "../functions/_shared/settings.ts";
import { createKeyring, masterKeyId } from "../functions/api/wallet/keys.ts";
import { rotateWalletKeys, walletsByKeyId } from "../functions/api/wallet/rotation.ts";

const say = (line: string) => console.log(`[wallet-keys] ${line}`);

export async function walletKeys(args: string[]): Promise<void> {
  const [command = "status", ...rest] = args;
  if (command === "new-key") {
    console.log(randomToken());
    return;
  }
  if (command !== "status" && command !== "rotate") {
    throw new Error(`unknown wallet-keys command ${command}; use status, rotate or new-key`);
  }
  const localDir = Deno.env.get("AGORA_LOCAL_DIR") ?? join(ROOT, ".local");
  const external = Deno.env.get("AGORA_DB_URL");
  let env: Record<string, string | undefined> = Deno.env.toObject();
  let cluster: Cluster | null = null;
  let started = false;
  if (!external) {
    env = await loadLocalEnv(localDir);
    cluster = new Cluster({
      dir: join(localDir, "postgres"),
      port: Number(env.AGORA_DB_PORT ?? 54322),
      password: env.AGORA_DB_PASSWORD!,
    });
    if (!(await cluster.exists())) throw new Error(`no local database in ${cluster.dir}`);
    if (!(await cluster.running())) {
      await cluster.start();
      started = true;
    }
  }
  if (command === "rotate" && rest.includes("--new-key")) {
    if (external) throw new Error("--new-key is for the local stack; hosted, set the secrets");
    const next = randomToken();
    const previous = [
      env.AGORA_WALLET_MASTER_KEY,
      ...(env.AGORA_WALLET_PREVIOUS_MASTER_KEYS ?? "").split(","),
    ].map((k) => k?.trim()).filter((k): k is string => !!k);
    await updateLocalEnv(localDir, {
      AGORA_WALLET_MASTER_KEY: next,
      AGORA_WALLET_PREVIOUS_MASTER_KEYS: previous.join(","),
    });
    env = {
      ...env,
      AGORA_WALLET_MASTER_KEY: next,
      AGORA_WALLET_PREVIOUS_MASTER_KEYS: previous.join(","),
    };
    say(
      `new master key ${await masterKeyId(parseMasterKey("new key", next))} written to ${
        join(localDir, "agora.env")
      }`,
    );
  }
  const current = env.AGORA_WALLET_MASTER_KEY;
  if (!current) throw new Error("AGORA_WALLET_MASTER_KEY is not set");
  const previous = (env.AGORA_WALLET_PREVIOUS_MASTER_KEYS ?? "").split(",").map((k) => k.trim())
    .filter((k) => k.length > 0);
  const ring = await createKeyring(
    parseMasterKey("AGORA_WALLET_MASTER_KEY", current),
    previous.map((k) => parseMasterKey("AGORA_WALLET_PREVIOUS_MASTER_KEYS", k)),
  );
  const sql = postgres(external ?? cluster!.url(), { max: 2, onnotice: () => {} });
  try {
    if (command === "status") {
      say(`current master key: ${ring.current.id}`);
      const counts = await walletsByKeyId(sql);
      if (!Object.keys(counts).length) say("no wallets yet");
      for (const [id, n] of Object.entries(counts)) {
        say(
          `${id}: ${n} wallet(s)${
            id === ring.current.id
              ? " (current)"
              : ring.byId.has(id)
              ? " (previous key set)"
              : " (key not set here)"
          }`,
        );
      }
      return;
    }
    const result = await rotateWalletKeys(sql, ring, { log: say });
    say(`re-sealed ${result.rewrapped} data key(s) under master key ${result.currentKeyId}`);
    for (const [id, n] of Object.entries(result.byKeyId)) say(`${id}: ${n} wallet(s)`);
    for (const [id, n] of Object.entries(result.unopenable)) {
      say(
        `${n} wallet(s) are sealed by master key ${id}, which is not set here: add it to ` +
          "AGORA_WALLET_PREVIOUS_MASTER_KEYS and run this again",
      );
    }
    if (Object.keys(result.unopenable).length) {
      throw new Error("some wallets are still sealed by another master key");
    }
    say("every wallet is sealed by the current master key: the previous keys can be removed");
  } finally {
    await sql.end({ timeout: 5 });
    if (started) await cluster!.stop();
  }
}
