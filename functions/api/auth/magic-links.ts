/**
 * Magic links: single use, expiring (15 minutes by default), stored as hashes. Requesting one
 * answers the same whether or not the address has an account; the account is created (with the
 * configured default role) on the first verified sign-in.
 */
import type { Tx } from "../../_shared/db.ts";
import { randomToken, sha256Hex } from "../../_shared/crypto.ts";
import { ApiError, unauthenticated } from "../../_shared/errors.ts";
import { currentConfig } from "../core/config-store.ts";
import type { Deps } from "../core/context.ts";
import { serverSql } from "../core/doors.ts";
import { createSession } from "./sessions.ts";
import type { IssuedSession } from "../core/context.ts";
import { enforceRateLimit, type RateContext } from "../core/rate-limits.ts";

/** Sends a sign-in link to `email` (rate-limited per IP and per address). */
export async function sendMagicLink(
  deps: Deps,
  input: { email: string; redirectTo: string | null },
  ctx: RateContext,
): Promise<void> {
  const sql = serverSql(deps, "magic-link request");
  const { rateLimits } = deps.settings;
  await enforceRateLimit(deps, ctx, {
    bucket: `signin:ip:${ctx.ip ?? "unknown"}`,
    rule: rateLimits.signinPerIp,
    group: "signin_ip",
  });
  await enforceRateLimit(deps, ctx, {
    bucket: `signin:email:${input.email}`,
    rule: rateLimits.signinPerEmail,
    group: "signin_email",
  });

  const config = await deps.config.get();
  if (!config.system.signupsOpen) {
    // Sign-ups are closed: only existing accounts get a link (the answer stays the same).
    const [known] = await sql`select 1 from app.users where lower(email) = lower(${input.email})`;
    if (!known) return;
  }
  const token = randomToken();
  await sql`
    insert into app_private.magic_links (email, token_hash, redirect_to, ip, expires_at)
    values (${input.email}, ${await sha256Hex(token)}, ${input.redirectTo}, ${ctx.ip},
            now() + make_interval(secs => ${deps.settings.magicLinkTtlSeconds}))`;
  const link = `${deps.settings.siteUrl}/api/auth/callback/email?token=${
    encodeURIComponent(token)
  }`;
  const minutes = Math.round(deps.settings.magicLinkTtlSeconds / 60);
  await deps.mailer.send({
    to: input.email,
    subject: `Your sign-in link for ${config.whiteLabel.brandName}`,
    text: `Sign in to ${config.whiteLabel.brandName} with this link:\n\n${link}\n\n` +
      `It works once and expires in ${minutes} minutes. If you did not ask for it, ignore this mail.\n`,
    links: [link],
  });
}

/**
 * Spends a magic-link token and opens a session. The token is spent by one conditional update,
 * so two concurrent uses cannot both succeed.
 */
export async function signInWithMagicLink(
  deps: Deps,
  token: string,
  ctx: RateContext,
): Promise<{ session: IssuedSession; redirectTo: string | null; created: boolean }> {
  const sql = serverSql(deps, "magic-link sign-in");
  await enforceRateLimit(deps, ctx, {
    bucket: `verify:ip:${ctx.ip ?? "unknown"}`,
    rule: deps.settings.rateLimits.verifyPerIp,
    group: "verify_ip",
  });
  const tokenHash = await sha256Hex(token);
  const outcome = await sql.begin(async (tx: Tx) => {
    const [link] = await tx<{ email: string; redirect_to: string | null }[]>`
      update app_private.magic_links set used_at = now()
      where token_hash = ${tokenHash} and used_at is null and expires_at > now()
      returning email, redirect_to`;
    if (!link) return null;
    const { config } = await currentConfig(tx);
    const [existing] = await tx<{ id: string; status: string }[]>`
      select id, status from app.users where lower(email) = lower(${link.email})`;
    if (existing && existing.status !== "active") {
      return { link, userId: existing.id, suspended: true, created: false };
    }
    let userId = existing?.id;
    if (!userId) {
      if (!config.system.signupsOpen) {
        throw new ApiError("forbidden", "Sign-ups are closed.", { reason: "signups_closed" });
      }
      const [created] = await tx<{ id: string }[]>`
        insert into app.users (email, role)
        values (${link.email}, ${config.system.defaultRole})
        returning id`;
      userId = created.id;
    }
    await tx`
      insert into app.identities (user_id, provider, provider_user_id, email)
      values (${userId}, 'email', ${link.email.toLowerCase()}, ${link.email})
      on conflict (provider, provider_user_id) do update set last_used_at = now()`;
    return { link, userId, suspended: false, created: !existing };
  });

  if (!outcome || outcome.suspended) {
    await deps.security({
      type: "auth.signin_failed",
      severity: "warning",
      userId: outcome?.userId ?? null,
      ip: ctx.ip,
      userAgent: ctx.userAgent,
      details: { provider: "email", reason: outcome ? "suspended" : "invalid_or_expired_token" },
    });
    if (outcome?.suspended) {
      throw new ApiError("forbidden", "This account is suspended.", { reason: "suspended" });
    }
    throw unauthenticated("The sign-in link is invalid, used or expired.");
  }
  const session = await createSession(deps, {
    userId: outcome.userId,
    provider: "email",
    ip: ctx.ip,
    userAgent: ctx.userAgent,
  });
  await deps.security({
    type: "auth.signin",
    userId: outcome.userId,
    ip: ctx.ip,
    userAgent: ctx.userAgent,
    details: { provider: "email", sessionId: session.user.sessionId, newAccount: outcome.created },
  });
  return { session, redirectTo: outcome.link.redirect_to, created: outcome.created };
}
