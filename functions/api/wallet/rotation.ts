/**
 * Master-key rotation (docs/wallet.md, "Rotating the master key"): every data key sealed by an
 * earlier master key is opened with it and sealed again by the current one. The private keys'
 * ciphertexts do not change. Each wallet is checked on the way (the private key opens under the
 * new seal and belongs to the wallet's address) before its row is written, in batches of short
 * transactions (`for update skip locked`, and only if the row still names the old key), so the
 * command can run while the platform serves, be interrupted, and be run again.
 */
import type { Sql } from "../../_shared/db.ts";
import { openPrivateKey, rewrapDataKey, type WalletKeyring } from "./keys.ts";
import { addressOf } from "./keys.ts";

export interface RotationResult {
  /** Data keys sealed again by the current master key in this run. */
  rewrapped: number;
  /** Wallets left sealed by master keys the ring does not hold, per key id (none: done). */
  unopenable: Record<string, number>;
  /** Wallets per master key id after the run. */
  byKeyId: Record<string, number>;
  currentKeyId: string;
}

/** Wallets per master key id. */
export async function walletsByKeyId(sql: Sql): Promise<Record<string, number>> {
  const rows = await sql<{ key_id: string; n: number }[]>`
    select key_id, count(*)::int as n from app_private.wallet_keys group by key_id order by key_id`;
  return Object.fromEntries(rows.map((r) => [r.key_id, r.n]));
}

/**
 * Re-seals every data key that an earlier key of the ring sealed under the current one. Wallets
 * sealed by a master key the ring does not hold are left as they are and counted in
 * `unopenable` (the rotation is complete only when that is empty).
 */
export async function rotateWalletKeys(
  sql: Sql,
  ring: WalletKeyring,
  opts: { batch?: number; log?: (line: string) => void } = {},
): Promise<RotationResult> {
  const batch = opts.batch ?? 100;
  let rewrapped = 0;
  for (;;) {
    const done = await sql.begin(async (tx) => {
      const rows = await tx<
        {
          wallet_id: string;
          address: string;
          key_id: string;
          wrapped_data_key: Uint8Array;
          encrypted_private_key: Uint8Array;
        }[]
      >`
        select k.wallet_id, w.address, k.key_id, k.wrapped_data_key, k.encrypted_private_key
        from app_private.wallet_keys k join app.wallets w on w.id = k.wallet_id
        where k.key_id <> ${ring.current.id} and k.key_id = any(${[...ring.byId.keys()]}::text[])
        order by k.wallet_id
        limit ${batch}
        for update of k skip locked`;
      for (const row of rows) {
        const sealed = {
          keyId: row.key_id,
          wrappedDataKey: new Uint8Array(row.wrapped_data_key),
          encryptedPrivateKey: new Uint8Array(row.encrypted_private_key),
        };
        const next = await rewrapDataKey(ring, row.wallet_id, row.address, sealed);
        const check = await openPrivateKey(ring, row.wallet_id, row.address, next);
        const belongs = addressOf(check) === row.address;
        check.fill(0);
        if (!belongs) {
          throw new Error(`wallet ${row.wallet_id}: its key does not match its address`);
        }
        await tx`
          update app_private.wallet_keys
          set key_id = ${next.keyId}, wrapped_data_key = ${next.wrappedDataKey}, rewrapped_at = now()
          where wallet_id = ${row.wallet_id} and key_id = ${row.key_id}`;
      }
      return rows.length;
    });
    rewrapped += done;
    if (done) opts.log?.(`re-sealed ${rewrapped} data key(s) so far`);
    if (done < batch) break;
  }
  const byKeyId = await walletsByKeyId(sql);
  const unopenable = Object.fromEntries(
    Object.entries(byKeyId).filter(([id]) => !ring.byId.has(id)),
  );
  return { rewrapped, unopenable, byKeyId, currentKeyId: ring.current.id };
}
