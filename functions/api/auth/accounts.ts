/**
 * Which account a provider's identity signs in to: the one rule every provider but e-mail follows
 * (Google, Apple, wallets). A named server path (docs/authorization.md): it runs with the pool's
 * own rights, because who the caller is is what it decides.
 *
 * 1. An identity seen before (provider and the provider's id for the person) signs in to its
 *    account. With `link`, it must already be the signed-in user's, else `identity_in_use`.
 * 2. `link` (a signed-in user asked for it): the identity is added to that user.
 * 3. Otherwise, an address the provider says is verified that equals an account's address (the
 *    account's address is always a verified one, app.users.email) links to that account. An
 *    unverified address never links, and a wallet has none.
 * 4. Otherwise a new account (role `system.defaultRole`; refused while `system.signupsOpen` is
 *    false), with the address only when it is verified and nobody has it.
 *
 * A suspended account signs in to nothing. Concurrent first sign-ins of one identity are
 * serialized by an advisory lock on it; a race with another path creating the same address is
 * tried once more.
 */
import type { Tx } from "../../_shared/db.ts";
import { currentConfig } from "../core/config-store.ts";
import type { Deps } from "../core/context.ts";
import { serverSql } from "../core/doors.ts";

export interface ProviderIdentity {
  provider: "google" | "apple" | "wallet";
  /** The provider's stable id for the person (`sub`; for a wallet, its checksummed address). */
  subject: string;
  email: string | null;
  /** Whether the provider vouches for `email`. */
  emailVerified: boolean;
  /** A display name for a new account. */
  name: string | null;
  /** A picture URL for a new account (http(s), at most 2048 characters). */
  image: string | null;
}

export type AccountFailure =
  | "suspended"
  | "signups_closed"
  | "identity_in_use"
  | "link_target_unavailable";

export type AccountOutcome =
  | {
    ok: true;
    userId: string;
    newAccount: boolean;
    /** Set when this sign-in attached the identity to an existing account, and how. */
    linked: "verified_email" | "explicit" | null;
  }
  | { ok: false; reason: AccountFailure; userId: string | null };

/** What app.users accepts as an address (its check constraint). */
const EMAIL = /^[^@\s]+@[^@\s]+$/;

interface UserRow {
  id: string;
  status: "active" | "suspended";
  email: string | null;
}

/** The account `identity` signs in to (or why none), in one transaction. */
export async function resolveAccount(
  deps: Deps,
  identity: ProviderIdentity,
  linkUserId: string | null,
): Promise<AccountOutcome> {
  const sql = serverSql(deps, "which account");
  try {
    return await sql.begin((tx: Tx) => resolveIn(tx, identity, linkUserId));
  } catch (err) {
    // Another path created an account with the same address meanwhile: resolve again, once.
    if ((err as { code?: string }).code !== "23505") throw err;
    return await sql.begin((tx: Tx) => resolveIn(tx, identity, linkUserId));
  }
}

async function resolveIn(
  tx: Tx,
  identity: ProviderIdentity,
  linkUserId: string | null,
): Promise<AccountOutcome> {
  const email = identity.email?.trim().toLowerCase() || null;
  const verifiedEmail = identity.emailVerified && email && EMAIL.test(email) && email.length <= 320
    ? email
    : null;
  await tx`select pg_advisory_xact_lock(hashtext(${`identity:${identity.provider}:${identity.subject}`}))`;

  const [known] = await tx<(UserRow & { identity_id: string })[]>`
    select u.id, u.status, u.email, i.id as identity_id
    from app.identities i join app.users u on u.id = i.user_id
    where i.provider = ${identity.provider} and i.provider_user_id = ${identity.subject}
    for update of i`;

  if (linkUserId) {
    // The signed-in user's row is locked as app.unlink_identity locks it.
    const [target] = await tx<UserRow[]>`
      select id, status, email from app.users where id = ${linkUserId} for update`;
    if (!target || target.status !== "active") {
      return { ok: false, reason: "link_target_unavailable", userId: linkUserId };
    }
    if (known && known.id !== target.id) {
      return { ok: false, reason: "identity_in_use", userId: linkUserId };
    }
    if (known) {
      await touchIdentity(tx, known.identity_id, email);
      return { ok: true, userId: target.id, newAccount: false, linked: null };
    }
    await addIdentity(tx, target.id, identity, email);
    // An account without an address takes the provider's verified one, if nobody has it.
    if (!target.email && verifiedEmail) {
      await tx`
        update app.users set email = ${verifiedEmail}
        where id = ${target.id} and email is null
          and not exists (select 1 from app.users o where lower(o.email) = ${verifiedEmail})`;
    }
    return { ok: true, userId: target.id, newAccount: false, linked: "explicit" };
  }

  if (known) {
    if (known.status !== "active") return { ok: false, reason: "suspended", userId: known.id };
    await touchIdentity(tx, known.identity_id, email);
    return { ok: true, userId: known.id, newAccount: false, linked: null };
  }

  if (verifiedEmail) {
    const [owner] = await tx<UserRow[]>`
      select id, status, email from app.users where lower(email) = ${verifiedEmail} for update`;
    if (owner) {
      if (owner.status !== "active") return { ok: false, reason: "suspended", userId: owner.id };
      await addIdentity(tx, owner.id, identity, email);
      return { ok: true, userId: owner.id, newAccount: false, linked: "verified_email" };
    }
  }

  const { config } = await currentConfig(tx);
  if (!config.system.signupsOpen) return { ok: false, reason: "signups_closed", userId: null };
  const [created] = await tx<{ id: string }[]>`
    insert into app.users (email, name, image, role)
    values (${verifiedEmail}, coalesce(${displayName(identity)}, app_private.new_account_name()),
            ${safeImage(identity.image)}, ${config.system.defaultRole})
    returning id`;
  await addIdentity(tx, created.id, identity, email);
  return { ok: true, userId: created.id, newAccount: true, linked: null };
}

async function addIdentity(
  tx: Tx,
  userId: string,
  identity: ProviderIdentity,
  email: string | null,
) {
  await tx`
    insert into app.identities (user_id, provider, provider_user_id, email)
    values (${userId}, ${identity.provider}, ${identity.subject}, ${email})`;
}

async function touchIdentity(tx: Tx, identityId: string, email: string | null) {
  // The address the provider gives now (it may change on its side); the account's own address
  // (app.users.email) is not touched.
  await tx`
    update app.identities set last_used_at = now(), email = coalesce(${email}, email)
    where id = ${identityId}`;
}

/**
 * A name for a new account: the provider's (at most 64 characters, as a profile's name), a
 * wallet's short address, else null: the database's `app_private.new_account_name()`
 * ("Member 4821"). Never the e-mail's local part, which would show part of the address to
 * everyone who sees the name (docs/account.md#profiles).
 */
function displayName(identity: ProviderIdentity): string | null {
  // deno-lint-ignore no-control-regex
  const name = identity.name?.replace(/[\u0000-\u001f\u007f-\u009f]/g, "").trim();
  if (name) return Array.from(name).slice(0, 64).join("").trim();
  if (identity.provider === "wallet") {
    return `${identity.subject.slice(0, 6)}…${identity.subject.slice(-4)}`;
  }
  return null;
}

function safeImage(url: string | null): string | null {
  if (!url || url.length > 2048) return null;
  try {
    const parsed = new URL(url);
    const web = parsed.protocol === "https:" || parsed.protocol === "http:";
    return web && parsed.href.length <= 2048 ? parsed.href : null;
  } catch {
    return null;
  }
}
