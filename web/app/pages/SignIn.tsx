/**
 * Sign-in. Today: a magic link by e-mail (POST /api/auth/signin), with, in local mode, a pointer
 * to the dev mailbox (`/_dev/mail`) and the link it holds.
 *
 * Other providers: the page asks GET /api/auth/providers; a provider that is listed as enabled
 * and has a button in PROVIDER_BUTTONS below is offered. None has one yet: Google, Apple and
 * wallet (SIWE over EIP-1193) sign-in arrive with their API (docs/web.md, "Hooks for later").
 */
import type { ComponentType } from "preact";
import { useEffect, useId, useState } from "preact/hooks";
import { api, ApiError, apiOrigin, describeError } from "../lib/api.ts";
import { config } from "../lib/config.ts";
import { currentLocation } from "../lib/router.tsx";
import { useStore } from "../lib/store.ts";
import { Brand } from "../components/Shell.tsx";

type ProviderId = "email" | "google" | "apple" | "wallet";

/** Buttons of the providers other than e-mail, keyed by provider id; filled as each lands. */
const PROVIDER_BUTTONS: Partial<Record<ProviderId, ComponentType<{ next: string }>>> = {};

function useProviders(): ProviderId[] {
  const [enabled, setEnabled] = useState<ProviderId[]>([]);
  useEffect(() => {
    api.get<{ providers: { id: ProviderId; enabled: boolean }[] }>("/api/auth/providers")
      .then((r) => setEnabled(r.providers.filter((p) => p.enabled).map((p) => p.id)))
      .catch(() => setEnabled([])); // not served yet: e-mail only
  }, []);
  return enabled;
}

interface DevMail {
  items: { to: string; subject: string; links: string[]; createdAt: string }[];
}

export function SignInPage() {
  const where = useStore(currentLocation);
  const cfg = useStore(config);
  const emailId = useId();
  const [email, setEmail] = useState("");
  const [state, setState] = useState<
    | { step: "form"; error?: string }
    | { step: "sending" }
    | { step: "sent"; address: string; devLink?: string | null; devMailUrl?: string }
  >({ step: "form" });
  const providers = useProviders();
  const next = where.query.get("next");
  const redirectTo = next && next.startsWith("/") && !next.startsWith("//") ? next : "/chat";
  const failed = where.query.get("error");

  async function submit(e: Event) {
    e.preventDefault();
    const address = email.trim();
    if (!address) return setState({ step: "form", error: "Enter your e-mail address." });
    setState({ step: "sending" });
    try {
      // A path is taken on the API's site; served from elsewhere, the link must come back here.
      const back = apiOrigin ? `${location.origin}${redirectTo}` : redirectTo;
      await api.post("/api/auth/signin", { provider: "email", email: address, redirectTo: back });
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

  const others = providers.filter((p) => p !== "email" && PROVIDER_BUTTONS[p]);
  const emailOn = cfg?.features.signIn.email !== false;

  return (
    <section class="signin">
      <div class="signin-card">
        <p class="signin-brand">
          <Brand />
        </p>
        <h1>Sign in</h1>
        {failed && <p class="error" role="alert">The sign-in did not complete ({failed}).</p>}
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
          <div class="providers">
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
