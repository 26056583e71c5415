/**
 * Sign-in: a magic link by e-mail (POST /api/auth/signin), with, in local mode, a pointer to the
 * dev mailbox (`/_dev/mail`) and the link it holds; Google, Apple and a browser wallet
 * (pages/signin/providers.tsx), each only when GET /api/auth/providers says it is on.
 *
 * `?next=` is where to land. `?reauth=1` is the fresh sign-in some actions need (deleting the
 * account, exporting a wallet's key answer 403 `reauthentication_required`): the page stays open
 * for a signed-in user, with their address filled in, and the new sign-in replaces the session.
 * A provider's failed callback comes back here with `?error=`.
 */
import type { ComponentType } from "preact";
import { useEffect, useId, useState } from "preact/hooks";
import { ApiError, apiOrigin, client, describeError } from "../lib/client.ts";
import { config } from "../lib/config.ts";
import { currentLocation } from "../lib/router.tsx";
import { session, signedOutBecause } from "../lib/session.ts";
import { useStore } from "../lib/store.ts";
import { Brand } from "../components/Brand.tsx";
import {
  AppleButton,
  GoogleButton,
  type ProviderButtonProps,
  type ProviderId,
  useProviders,
  WalletButton,
} from "./signin/providers.tsx";

/** Buttons of the providers other than e-mail, keyed by provider id. */
const PROVIDER_BUTTONS: Partial<Record<ProviderId, ComponentType<ProviderButtonProps>>> = {
  google: GoogleButton,
  apple: AppleButton,
  wallet: WalletButton,
};

/**
 * What a failed callback (`?error=`: a magic link's, or Google's or Apple's) means, and what to
 * do, for people. `suspended` adds the white label's support address.
 */
const CALLBACK_ERRORS: Record<string, string> = {
  link_invalid: "This sign-in link was already used or has expired (links work once, for 15 " +
    "minutes). Send yourself a new one below.",
  suspended: "This account is suspended, so it cannot sign in.",
  signups_closed: "New accounts cannot be created at the moment.",
  rate_limited: "Too many sign-in attempts from here. Wait a few minutes, then try again.",
  unavailable: "The service is busy. Try again in a moment.",
  invalid_state: "The sign-in took too long, was already finished, or was started in another " +
    "browser. Start again below.",
  access_denied: "You cancelled at the provider.",
  provider_disabled: "That way of signing in is turned off.",
  provider_error: "The provider refused the sign-in. Try again, or use another way below.",
  provider_unavailable: "The provider does not answer. Try again later, or use another way.",
  missing_code: "The provider sent no answer. Start again below.",
  token_exchange_failed: "The provider did not confirm the sign-in. Start again below.",
  invalid_id_token: "The provider's answer could not be verified. Start again below.",
  nonce_mismatch: "The provider's answer could not be verified. Start again below.",
  identity_in_use: "That account at the provider already signs in to another account here.",
  link_target_unavailable: "The account to link to cannot be used. Sign in again.",
  forbidden: "This account may not sign in (it may be suspended).",
};

interface DevMail {
  items: { to: string; subject: string; links: string[]; createdAt: string }[];
}

export function SignInPage() {
  const where = useStore(currentLocation);
  const cfg = useStore(config);
  const me = useStore(session).user;
  const because = useStore(signedOutBecause);
  const emailId = useId();
  const reauth = where.query.has("reauth") && me !== null;
  const [email, setEmail] = useState(reauth ? me?.email ?? "" : "");
  const [state, setState] = useState<
    | { step: "form"; error?: string }
    | { step: "sending" }
    | { step: "sent"; address: string; devLink?: string | null; devMailUrl?: string }
  >({ step: "form" });
  const providers = useProviders();
  const next = where.query.get("next");
  const redirectTo = next && next.startsWith("/") && !next.startsWith("//") ? next : "/chat";
  const failed = where.query.get("error");
  useEffect(() => {
    if (reauth && me?.email && !email) setEmail(me.email);
  }, [reauth, me?.email]);

  async function submit(e: Event) {
    e.preventDefault();
    const address = email.trim();
    if (!address) return setState({ step: "form", error: "Enter your e-mail address." });
    setState({ step: "sending" });
    try {
      // A path is taken on the API's site; served from elsewhere, the link must come back here.
      const back = apiOrigin ? `${location.origin}${redirectTo}` : redirectTo;
      await client.POST("/api/auth/signin", {
        body: { provider: "email", email: address, redirectTo: back },
      });
    } catch (err) {
      const message = err instanceof ApiError && err.code === "invalid_request"
        ? "That does not look like an e-mail address."
        : describeError(err);
      return setState({ step: "form", error: message });
    }
    // Local mode keeps mail in a dev mailbox instead of sending it; elsewhere this is a 404.
    const devMailUrl = `${apiOrigin}/_dev/mail?to=${encodeURIComponent(address.toLowerCase())}`;
    let devLink: string | null | undefined;
    try {
      const response = await fetch(devMailUrl, { cache: "no-store" });
      if (response.ok) {
        const mail: DevMail = await response.json();
        devLink = mail.items[0]?.links[0] ?? null;
      }
    } catch {
      // not local mode
    }
    setState({
      step: "sent",
      address,
      devLink,
      devMailUrl: devLink === undefined ? undefined : devMailUrl,
    });
  }

  const others = (providers ?? []).filter((p) => p !== "email" && PROVIDER_BUTTONS[p]);
  const emailOn = providers ? providers.includes("email") : cfg?.features.signIn.email !== false;

  return (
    <section class="signin">
      <div class="signin-card">
        <p class="signin-brand">
          <Brand />
        </p>
        <h1>{reauth ? "Confirm it’s you" : "Sign in"}</h1>
        {reauth && (
          <p class="notice" role="status">
            What you were doing needs a recent sign-in. Sign in again as{" "}
            <strong>{me?.email ?? me?.name}</strong>; you will come back to it.
          </p>
        )}
        {!reauth && because === "ended" && (
          <p class="notice" role="status" data-testid="session-ended">
            Your session has ended (signed out elsewhere, or by an administrator). Sign in again to
            continue.
          </p>
        )}
        {!reauth && because === "deleted" && (
          <p class="notice" role="status">Your account was deleted. Thank you for being here.</p>
        )}
        {failed && (
          <div class="error" role="alert" data-testid="signin-error">
            <p>
              The sign-in did not complete. {CALLBACK_ERRORS[failed] ??
                "Something went wrong. Start again below."}
            </p>
            {(failed === "suspended" || failed === "forbidden") && (
              <p>
                {cfg?.whiteLabel.supportEmail
                  ? (
                    <>
                      If you think this is a mistake, write to{" "}
                      <a href={`mailto:${cfg.whiteLabel.supportEmail}`}>
                        {cfg.whiteLabel.supportEmail}
                      </a>.
                    </>
                  )
                  : "If you think this is a mistake, contact the site's support."}
              </p>
            )}
          </div>
        )}
        {state.step === "sent"
          ? (
            <div class="sent" role="status">
              <p>
                We sent a sign-in link to{" "}
                <strong>{state.address}</strong>. Open it in this browser to continue.
              </p>
              {state.devMailUrl && (
                <div class="dev-mail">
                  <p>
                    <strong>Local mode:</strong>{" "}
                    the stack keeps mail instead of sending it. It is in the{" "}
                    <a href={state.devMailUrl} target="_blank" rel="noopener">
                      dev mailbox (/_dev/mail)
                    </a>.
                  </p>
                  {state.devLink && (
                    <p>
                      <a class="button" href={state.devLink} data-testid="dev-magic-link">
                        Open the sign-in link from the dev mailbox
                      </a>
                    </p>
                  )}
                </div>
              )}
              <button type="button" class="link" onClick={() => setState({ step: "form" })}>
                Use another address
              </button>
            </div>
          )
          : emailOn
          ? (
            <form onSubmit={submit} noValidate>
              <label for={emailId}>E-mail address</label>
              <input
                id={emailId}
                type="email"
                name="email"
                autocomplete="email"
                required
                value={email}
                onInput={(e) => setEmail(e.currentTarget.value)}
                aria-invalid={state.step === "form" && state.error ? "true" : undefined}
                aria-describedby={state.step === "form" && state.error
                  ? `${emailId}-error`
                  : undefined}
              />
              {state.step === "form" && state.error && (
                <p class="error" id={`${emailId}-error`} role="alert">{state.error}</p>
              )}
              <button type="submit" disabled={state.step === "sending"}>
                {state.step === "sending" ? "Sending…" : "Send me a sign-in link"}
              </button>
              <p class="hint">No password: we e-mail you a link that signs you in.</p>
            </form>
          )
          : <p>Sign-in by e-mail is turned off.</p>}
        {others.length > 0 && (
          <div class="providers" role="group" aria-label="Other ways to sign in">
            {emailOn && state.step !== "sent" && <p class="or">or</p>}
            {others.map((id) => {
              const Button = PROVIDER_BUTTONS[id]!;
              return <Button key={id} next={redirectTo} />;
            })}
          </div>
        )}
      </div>
    </section>
  );
}
