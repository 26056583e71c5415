/**
 * Wallet creation: a named server path (docs/authorization.md). A new key from the CSPRNG,
 * sealed (keys.ts) and stored in app_private with its wallet row, in one transaction; the user's
 * `wallet_address` follows. `ensureWallet` is what sign-in calls, for every provider, from the
 * one place a session is issued (auth/sessions.ts `createSession`).
 */
import type { Sql, Tx } from "../../_shared/db.ts";
import { ApiError } from "../../_shared/errors.ts";
import { roleAtLeast } from "../core/context.ts";
import type { Deps, Role } from "../core/context.ts";
import { addressOf, newPrivateKey, type SealedKey, sealPrivateKey } from "./keys.ts";
import { serverSql } from "../core/doors.ts";

/** A wallet as the API shows it. */
export interface WalletJson {
  id: string;
  address: string;
  chainId: number;
  createdAt: string;
  exportedAt: string | null;
}

export interface WalletRow {
  id: string;
  user_id: string;
  address: string;
  created_at: Date;
  exported_at: Date | null;
}

export function walletJson(row: WalletRow, chainId: number): WalletJson {
  return {
    id: row.id,
    address: row.address,
    chainId,
    createdAt: row.created_at.toISOString(),
    exportedAt: row.exported_at ? row.exported_at.toISOString() : null,
  };
}

export function walletsDisabled(): ApiError {
  return new ApiError(
    "unavailable",
    "Wallet keys cannot be handled: AGORA_WALLET_MASTER_KEY is not set on this server.",
  );
}

/**
 * Creates the user's wallet (a fresh key, sealed under the current master key). 409 when the
 * user already has one, also when a concurrent call won.
 */
export async function createWallet(deps: Deps, userId: string): Promise<WalletRow> {
  const sql = serverSql(deps, "wallet creation");
  if (!deps.walletKeys) throw walletsDisabled();
  const ring = await deps.walletKeys;
  const privateKey = newPrivateKey();
  let sealed: SealedKey;
  const walletId = crypto.randomUUID();
  let address: string;
  try {
    address = addressOf(privateKey);
    sealed = await sealPrivateKey(ring, walletId, address, privateKey);
  } finally {
    privateKey.fill(0);
  }
  const [row] = await sql<WalletRow[]>`
    select id, user_id, address, created_at, exported_at
    from app_private.insert_wallet(
      ${walletId}, ${userId}, ${address}, ${sealed.keyId},
      ${sealed.wrappedDataKey}, ${sealed.encryptedPrivateKey})`;
  return row;
}

/**
 * The wallet of a user from SUBSCRIBER up, created on first call: what sign-in runs. Null (and
 * nothing created) for a VISITOR, while `features.wallet` is off, or without a master key. Never
 * throws for a lost race (a concurrent sign-in created it: that one is returned).
 */
export async function ensureWallet(deps: Deps, userId: string): Promise<WalletRow | null> {
  const sql = serverSql(deps, "wallet creation");
  if (!deps.walletKeys) return null;
  const [user] = await sql<
    {
      role: Role;
      id: string | null;
      address: string | null;
      created_at: Date | null;
      exported_at: Date | null;
    }[]
  >`
    select u.role, w.id, w.address, w.created_at, w.exported_at
    from app.users u left join app.wallets w on w.user_id = u.id
    where u.id = ${userId}`;
  if (!user) return null;
  if (user.id) {
    return {
      id: user.id,
      user_id: userId,
      address: user.address!,
      created_at: user.created_at!,
      exported_at: user.exported_at,
    };
  }
  if (!roleAtLeast(user.role, "SUBSCRIBER")) return null;
  const config = await deps.config.get();
  if (!config.features.wallet) return null;
  try {
    return await createWallet(deps, userId);
  } catch (err) {
    if ((err as { code?: string }).code !== "AG409") throw err;
    return await walletOf(sql, userId);
  }
}

/** A user's wallet row (server path), or null. */
export async function walletOf(sql: Sql | Tx, userId: string): Promise<WalletRow | null> {
  const [row] = await sql<WalletRow[]>`
    select id, user_id, address, created_at, exported_at from app.wallets where user_id = ${userId}`;
  return row ?? null;
}

/** A wallet's sealed key (server path: only to sign or export). */
export async function sealedKeyOf(sql: Sql | Tx, walletId: string): Promise<SealedKey> {
  const [row] = await sql<
    { key_id: string; wrapped_data_key: Uint8Array; encrypted_private_key: Uint8Array }[]
  >`
    select key_id, wrapped_data_key, encrypted_private_key
    from app_private.wallet_keys where wallet_id = ${walletId}`;
  if (!row) throw new Error(`wallet ${walletId} has no key row`);
  return {
    keyId: row.key_id,
    wrappedDataKey: new Uint8Array(row.wrapped_data_key),
    encryptedPrivateKey: new Uint8Array(row.encrypted_private_key),
  };
}
