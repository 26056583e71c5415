/**
 * Key export (docs/wallet.md, "Export"): a named server path. The private key leaves only inside
 * a compact JWE (`alg: ECDH-ES`, `enc: A256GCM`, made by jose) encrypted to a one-time P-256 key
 * the client generated and sent as a JWK; only that client's private half opens it. The route
 * checks the fresh sign-in first (core/middleware/freshness.ts); this counts against `wallet.exportsPerDay`, sets `exported_at`, records the security event
 * `wallet.key_exported` and notifies the owner with a critical SYSTEM notification (critical:
 * preferences and quiet hours do not hold it back).
 */
import { CompactEncrypt, importJWK, type JWK } from "jose";
import { badRequest, notFound } from "../../_shared/errors.ts";
import type { Deps, SessionUser } from "../core/context.ts";
import { enforceRateLimit, type RateContext } from "../core/rate-limits.ts";
import { withPrivateKey } from "./keys.ts";
import { sealedKeyOf, walletOf, walletsDisabled } from "./wallets.ts";
import { serverSql } from "../core/doors.ts";

const DAY_SECONDS = 86_400;

/** A compact JWE of `plaintext` to the recipient's P-256 key: ECDH-ES key agreement, A256GCM. */
function encryptTo(recipient: CryptoKey | Uint8Array, plaintext: Uint8Array): Promise<string> {
  return new CompactEncrypt(plaintext)
    .setProtectedHeader({ alg: "ECDH-ES", enc: "A256GCM" })
    .encrypt(recipient);
}

export async function exportKey(
  deps: Deps,
  user: SessionUser,
  publicKey: JWK,
  ctx: RateContext,
): Promise<{ address: string; jwe: string }> {
  const sql = serverSql(deps, "key export");
  const wallet = await walletOf(sql, user.id);
  if (!wallet) throw notFound("You have no wallet yet.");
  let recipient: CryptoKey | Uint8Array;
  try {
    recipient = await importJWK(publicKey, "ECDH-ES");
    // A point off the curve imports but fails the key agreement: try one before any key is opened.
    await encryptTo(recipient, new Uint8Array(1));
  } catch {
    throw badRequest("Invalid publicKey.", [
      { path: "publicKey", message: "not a P-256 public key (JWK)" },
    ]);
  }
  const config = await deps.config.get();
  await enforceRateLimit(deps, ctx, {
    bucket: `wallet:export:${user.id}`,
    rule: { limit: config.wallet.exportsPerDay, windowSeconds: DAY_SECONDS },
    group: "wallet_export",
    userId: user.id,
  });
  if (!deps.walletKeys) throw walletsDisabled();
  const ring = await deps.walletKeys;
  const sealed = await sealedKeyOf(sql, wallet.id);
  const jwe = await withPrivateKey(
    ring,
    wallet.id,
    wallet.address,
    sealed,
    (key) =>
      new CompactEncrypt(new TextEncoder().encode(key))
        .setProtectedHeader({ alg: "ECDH-ES", enc: "A256GCM" })
        .encrypt(recipient),
  );
  await sql.begin(async (tx) => {
    await tx`update app.wallets set exported_at = now() where id = ${wallet.id}`;
    await tx`
      select app_private.notify(
        ${user.id}, 'SYSTEM', 'Your wallet key was exported',
        ${
      `The private key of your wallet ${wallet.address} was exported just now. If this was ` +
      "not you, move your funds to a new wallet at once and sign out everywhere."
    },
        ${tx.json({ address: wallet.address, kind: "wallet.key_exported" } as never)}::jsonb,
        'critical')`;
  });
  await deps.security({
    type: "wallet.key_exported",
    severity: "critical",
    userId: user.id,
    ip: ctx.ip,
    userAgent: ctx.userAgent,
    details: { walletId: wallet.id, address: wallet.address, sessionId: user.sessionId },
  });
  return { address: wallet.address, jwe };
}
