/**
 * Google and Apple sign-in flows: start, callback, and the integrators' code exchange. A named
 * server path (docs/authorization.md): the caller is not known until the provider has vouched.
 *
 * Start (`POST /api/auth/signin { provider, redirectTo?, link?, codeChallenge? }`): a row in
 * app_private.oauth_flows holds the hashes of a new `state` and `nonce`, a PKCE verifier, where
 * to go afterwards, the signed-in user for `link`, and what binds the flow to whoever started it:
 *
 * - a browser (no `codeChallenge`): the hash of a random value kept in the `agora-oauth-binding`
 *   cookie (HttpOnly, Secure, `SameSite=None` so that it comes along with Apple's cross-site form
 *   post, path limited to the callbacks, ten minutes). A callback without the cookie that was set
 *   where the flow started is refused, so a stranger's link cannot sign the browser in to the
 *   stranger's account (login CSRF);
 * - an integrator (it sent `codeChallenge`, the S256 hash of a verifier only it knows): the
 *   callback ends with a single-use code in the redirect instead of cookies, and only
 *   `POST /api/auth/exchange { code, codeVerifier }` with the matching verifier turns it into
 *   tokens (five minutes). The verified identity waits with the code: the account it signs in to
 *   (or links to) is decided at the exchange, so a flow completed by somebody else's browser
 *   changes no account unless its code also reaches the holder of the verifier.
 *
 * Callback: the state is spent by one conditional update (single use even under concurrency);
 * unknown, used, expired or missing: refused here (400), which the callback routes turn into a
 * 303 to the site's `/signin?error=invalid_state` (a browser is on the other end). Every later
 * failure answers 303 to the flow's `redirectTo` with `?error=<code>` (oidc.ts and accounts.ts say
 * which).
 */
import { randomToken, sha256Base64url, sha256Hex, timingSafeEqual } from "../../_shared/crypto.ts";
import { ApiError, badRequest, unauthenticated } from "../../_shared/errors.ts";
import type { Context } from "hono";
import { setCookie } from "hono/cookie";
import type { AppEnv, Deps, IssuedSession } from "../core/context.ts";
import { enforceRateLimit, type RateContext } from "../core/rate-limits.ts";
import { type AccountFailure, type ProviderIdentity, resolveAccount } from "./accounts.ts";
import {
  authorizationUrl,
  exchangeCode,
  OidcError,
  type OidcFailure,
  type OidcProviderId,
  providerSettings,
  verifyIdToken,
} from "./oidc.ts";
import { providerStates } from "./providers.ts";
import { safeRedirect } from "./redirects.ts";
import { createSession } from "./sessions.ts";
import { serverSql } from "../core/doors.ts";

/** The browser-binding cookie of the flows this browser started. */
export const BINDING_COOKIE = "agora-oauth-binding";
export const FLOW_TTL_SECONDS = 600;
const EXCHANGE_TTL_SECONDS = 300;
const BINDING = /^[A-Za-z0-9_-]{43}$/;

/** What a failed callback puts in `?error=`. */
export type CallbackError =
  | "invalid_state"
  | "access_denied"
  | "provider_error"
  | "missing_code"
  | "provider_disabled"
  | OidcFailure
  | AccountFailure;

/** Where the provider sends the browser back to. */
export function callbackUrl(deps: Deps, provider: OidcProviderId): string {
  return `${deps.settings.siteUrl}/api/auth/callback/${provider}`;
}

/** The path the binding cookie is sent to: the callbacks, under the site's base path. */
export function bindingCookiePath(deps: Deps): string {
  return `${new URL(deps.settings.siteUrl).pathname.replace(/\/+$/, "")}/api/auth/callback`;
}

export interface StartedFlow {
  url: string;
  /** The binding cookie's value to set (browser flows), or null (integrator flows). */
  binding: string | null;
}

/** Starts a flow: the provider's authorization URL, and the binding for a browser. */
export async function startOAuth(
  deps: Deps,
  input: {
    provider: OidcProviderId;
    redirectTo: string | null;
    linkUserId: string | null;
    clientChallenge: string | null;
    /** The binding cookie the browser already has: flows started in one browser share it. */
    existingBinding: string | null;
  },
  ctx: RateContext,
): Promise<StartedFlow> {
  const sql = serverSql(deps, "OAuth sign-in");
  const settings = providerSettings(deps.settings, input.provider)!;
  const state = randomToken();
  const nonce = randomToken();
  const codeVerifier = randomToken();
  const binding = input.clientChallenge
    ? null
    : input.existingBinding && BINDING.test(input.existingBinding)
    ? input.existingBinding
    : randomToken();
  let url: string;
  try {
    url = await authorizationUrl(input.provider, settings, {
      state,
      nonce,
      codeChallenge: await sha256Base64url(codeVerifier),
      redirectUri: callbackUrl(deps, input.provider),
    });
  } catch (err) {
    if (!(err instanceof OidcError)) throw err;
    deps.log("warn", "sign-in provider unavailable", {
      provider: input.provider,
      error: err.message,
    });
    throw new ApiError("unavailable", `${input.provider} does not answer; try again later.`);
  }
  await sql`
    insert into app_private.oauth_flows
      (provider, state_hash, nonce_hash, code_verifier, binding_hash, client_challenge, redirect_to,
       link_user_id, ip, expires_at)
    values (${input.provider}, ${await sha256Hex(state)}, ${await sha256Hex(
    nonce,
  )}, ${codeVerifier},
            ${binding ? await sha256Hex(binding) : null}, ${input.clientChallenge},
            ${input.redirectTo}, ${input.linkUserId}, ${ctx.ip},
            now() + make_interval(secs => ${FLOW_TTL_SECONDS}))`;
  return { url, binding };
}

/** How a callback ends: a browser session, or a redirect (an integrator's code, or an error). */
export type CallbackOutcome =
  | { kind: "session"; session: IssuedSession; redirectTo: string }
  | { kind: "redirect"; location: string };

interface Flow {
  id: string;
  nonce_hash: string;
  code_verifier: string;
  binding_hash: string | null;
  client_challenge: string | null;
  redirect_to: string | null;
  link_user_id: string | null;
}

/** The parameters a provider sends back (query for Google, form post for Apple). */
export interface CallbackParams {
  state?: string;
  code?: string;
  error?: string;
  /** Apple, first authorization only: `{"name":{"firstName","lastName"},"email"}`. */
  user?: string;
}

/** Finishes a flow at the callback. Throws 400 for a missing or unknown state. */
export async function finishOAuth(
  deps: Deps,
  provider: OidcProviderId,
  params: CallbackParams,
  bindingCookie: string | null,
  ctx: RateContext,
): Promise<CallbackOutcome> {
  const sql = serverSql(deps, "OAuth sign-in");
  await enforceRateLimit(deps, ctx, {
    bucket: `verify:ip:${ctx.ip ?? "unknown"}`,
    rule: deps.settings.rateLimits.verifyPerIp,
    group: "verify_ip",
  });
  const failEvent = (reason: string, userId: string | null = null) =>
    deps.security({
      type: "auth.signin_failed",
      severity: "warning",
      userId,
      ip: ctx.ip,
      userAgent: ctx.userAgent,
      details: { provider, reason },
    });
  if (!params.state) {
    await failEvent("missing_state");
    throw badRequest("The sign-in has no state.", [{ path: "state", message: "required" }]);
  }
  // Spent here, whatever happens next: a state works once.
  const [flow] = await sql<Flow[]>`
    update app_private.oauth_flows o set used_at = now(), code_verifier = null
    from (
      select f.id, f.code_verifier from app_private.oauth_flows f
      where f.state_hash = ${await sha256Hex(params.state)} and f.provider = ${provider}
        and f.used_at is null and f.expires_at > now()
      for update
    ) spent
    where o.id = spent.id
    returning o.id, o.nonce_hash, spent.code_verifier, o.binding_hash, o.client_challenge,
              o.redirect_to, o.link_user_id`;
  if (!flow) {
    await failEvent("invalid_state");
    throw badRequest("The sign-in state is unknown, used or expired; start again.", [
      { path: "state", message: "unknown, used or expired" },
    ]);
  }

  const target = (flow.redirect_to && safeRedirect(flow.redirect_to, deps.settings)) ??
    `${deps.settings.siteUrl}/`;
  const fail = async (error: CallbackError, userId: string | null = null) => {
    await failEvent(error, userId);
    return { kind: "redirect" as const, location: withParam(target, "error", error) };
  };

  if (flow.binding_hash) {
    const bound = bindingCookie !== null && BINDING.test(bindingCookie) &&
      timingSafeEqual(await sha256Hex(bindingCookie), flow.binding_hash);
    if (!bound) return await fail("invalid_state");
  }
  if (params.error) {
    return await fail(params.error === "access_denied" ? "access_denied" : "provider_error");
  }
  if (!params.code) return await fail("missing_code");
  const state = (await providerStates(deps)).find((p) => p.id === provider);
  if (!state?.enabled) return await fail("provider_disabled");

  const settings = providerSettings(deps.settings, provider)!;
  let claims;
  try {
    const idToken = await exchangeCode(provider, settings, {
      code: params.code,
      codeVerifier: flow.code_verifier,
      redirectUri: callbackUrl(deps, provider),
    });
    claims = await verifyIdToken(settings, idToken, flow.nonce_hash);
  } catch (err) {
    if (!(err instanceof OidcError)) throw err;
    deps.log("warn", "sign-in refused", { provider, failure: err.failure, error: err.message });
    return await fail(err.failure);
  }

  const identity: ProviderIdentity = {
    provider,
    subject: claims.sub,
    email: claims.email,
    emailVerified: claims.emailVerified,
    name: claims.name ?? (provider === "apple" ? appleName(params.user) : null),
    image: claims.picture,
  };

  if (flow.client_challenge) {
    // An integrator: the verified identity waits behind a single-use code that only the holder
    // of the verifier can exchange. Which account it signs in to (or links to) is decided then,
    // so a flow someone else completed in their browser changes no account by itself.
    const code = randomToken();
    await sql`
      update app_private.oauth_flows
      set exchange_code_hash = ${await sha256Hex(code)},
          exchange_expires_at = now() + make_interval(secs => ${EXCHANGE_TTL_SECONDS}),
          result_identity = ${sql.json(identity as never)}, result_authenticated_at = now()
      where id = ${flow.id}`;
    return { kind: "redirect", location: withParam(target, "code", code) };
  }

  const account = await resolveAccount(deps, identity, flow.link_user_id);
  if (!account.ok) return await fail(account.reason, account.userId);
  await linkedEvent(deps, ctx, provider, account.linked, account.userId);
  const session = await createSession(deps, {
    userId: account.userId,
    provider,
    ip: ctx.ip,
    userAgent: ctx.userAgent,
  });
  await signinEvent(deps, ctx, provider, session, account.newAccount);
  return { kind: "session", session, redirectTo: target };
}

/**
 * `POST /api/auth/exchange`: an integrator's code and the verifier of the challenge it sent at
 * the start, for a session. The code is spent by the first attempt, right or wrong.
 */
export async function exchangeSignInCode(
  deps: Deps,
  input: { code: string; codeVerifier: string },
  ctx: RateContext,
): Promise<IssuedSession> {
  const sql = serverSql(deps, "OAuth sign-in");
  await enforceRateLimit(deps, ctx, {
    bucket: `verify:ip:${ctx.ip ?? "unknown"}`,
    rule: deps.settings.rateLimits.verifyPerIp,
    group: "verify_ip",
  });
  // Spent, and the identity cleared, by the first attempt, whatever happens next.
  const [flow] = await sql<{
    provider: OidcProviderId;
    client_challenge: string;
    identity: ProviderIdentity;
    authenticated_at: Date;
    link_user_id: string | null;
  }[]>`
    update app_private.oauth_flows o set exchanged_at = now(), result_identity = null
    from (
      select f.id, f.result_identity from app_private.oauth_flows f
      where f.exchange_code_hash = ${await sha256Hex(input.code)} and f.exchanged_at is null
        and f.exchange_expires_at > now()
      for update
    ) spent
    where o.id = spent.id
    returning o.provider, o.client_challenge, spent.result_identity as identity,
              o.result_authenticated_at as authenticated_at, o.link_user_id`;
  const refuse = async (reason: string, userId: string | null = null) => {
    await deps.security({
      type: "auth.signin_failed",
      severity: "warning",
      userId,
      ip: ctx.ip,
      userAgent: ctx.userAgent,
      details: { provider: flow?.provider ?? "oauth", reason },
    });
  };
  if (!flow) {
    await refuse("invalid_or_expired_code");
    throw unauthenticated("The sign-in code is invalid, used or expired.");
  }
  if (!timingSafeEqual(await sha256Base64url(input.codeVerifier), flow.client_challenge)) {
    await refuse("code_verifier_mismatch");
    throw unauthenticated("The sign-in code is invalid, used or expired.");
  }
  const account = await resolveAccount(deps, flow.identity, flow.link_user_id);
  if (!account.ok) {
    await refuse(account.reason, account.userId);
    if (account.reason === "identity_in_use") {
      throw new ApiError(
        "conflict",
        `This ${flow.provider} account already signs in to another account.`,
      );
    }
    if (account.reason === "signups_closed") {
      throw new ApiError("forbidden", "Sign-ups are closed.");
    }
    throw new ApiError("forbidden", "This account cannot sign in.");
  }
  await linkedEvent(deps, ctx, flow.provider, account.linked, account.userId);
  const session = await createSession(deps, {
    userId: account.userId,
    provider: flow.provider,
    ip: ctx.ip,
    userAgent: ctx.userAgent,
    authenticatedAt: flow.authenticated_at,
  });
  await signinEvent(deps, ctx, flow.provider, session, account.newAccount);
  return session;
}

async function linkedEvent(
  deps: Deps,
  ctx: RateContext,
  provider: string,
  linked: "verified_email" | "explicit" | null,
  userId: string,
) {
  if (!linked) return;
  await deps.security({
    type: "auth.identity_linked",
    severity: "warning",
    userId,
    ip: ctx.ip,
    userAgent: ctx.userAgent,
    details: { provider, via: linked },
  });
}

async function signinEvent(
  deps: Deps,
  ctx: RateContext,
  provider: string,
  session: IssuedSession,
  newAccount: boolean,
) {
  await deps.security({
    type: "auth.signin",
    userId: session.user.id,
    ip: ctx.ip,
    userAgent: ctx.userAgent,
    details: { provider, sessionId: session.user.sessionId, newAccount },
  });
}

/** `url` with one more query parameter. */
function withParam(url: string, name: string, value: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set(name, value);
  return parsed.href;
}

/** The name in Apple's `user` form field (sent on the first authorization only). */
function appleName(user: string | undefined): string | null {
  if (!user || user.length > 4096) return null;
  try {
    const parsed = JSON.parse(user) as { name?: { firstName?: unknown; lastName?: unknown } };
    const parts = [parsed?.name?.firstName, parsed?.name?.lastName]
      .filter((p): p is string => typeof p === "string" && p.trim() !== "")
      .map((p) => p.trim());
    return parts.length ? parts.join(" ").slice(0, 200) : null;
  } catch {
    return null;
  }
}

/**
 * The OAuth flow's browser binding (oauth.ts): HttpOnly, `SameSite=None` so that it comes along
 * with Apple's cross-site form post to the callback (a Lax cookie would not), therefore always
 * `Secure` (browsers refuse `SameSite=None` without it, and treat http://localhost as secure),
 * sent only to the callbacks, for as long as a flow lives. It authenticates nothing by itself: it
 * only has to match the hash stored with the flow's state.
 */
export function setBindingCookie(c: Context<AppEnv>, value: string): void {
  setCookie(c, BINDING_COOKIE, value, {
    httpOnly: true,
    sameSite: "None",
    secure: true,
    path: bindingCookiePath(c.get("deps")),
    maxAge: FLOW_TTL_SECONDS,
  });
}
