/**
 * The sign-in buttons of the providers other than e-mail: Google and Apple (the OAuth redirect
 * flow: POST /api/auth/signin answers the provider's authorization URL, the browser goes there and
 * comes back to /api/auth/callback/<provider>, which sets the cookies and redirects), and a
 * browser wallet (Sign-In with Ethereum over EIP-1193, siwe.ts, loaded on first use).
 *
 * `next` is where to land; with `link`, the provider is attached to the signed-in account instead
 * (the account page uses the same buttons).
 */
import { useEffect, useId, useState } from "preact/hooks";
import { apiOrigin, client, data, describeError, FRESH } from "../../lib/client.ts";
import { loadSession } from "../../lib/session.ts";
import { navigate } from "../../lib/router.tsx";

export type ProviderId = "email" | "google" | "apple" | "wallet";

export interface ProviderButtonProps {
  /** A local path to land on afterwards. */
  next: string;
  link?: boolean;
  /** Called after a wallet sign-in or link (OAuth leaves the page instead). */
  onDone?: () => void;
}

/** The providers GET /api/auth/providers says are on (null while asking). */
export function useProviders(): ProviderId[] | null {
  const [enabled, setEnabled] = useState<ProviderId[] | null>(null);
  useEffect(() => {
    client.GET("/api/auth/providers", FRESH).then(data)
      .then((r) => setEnabled(r.providers.filter((p) => p.enabled).map((p) => p.id as ProviderId)))
      .catch(() => setEnabled(["email"])); // an older server: e-mail only
  }, []);
  return enabled;
}

/** An absolute URL when the API is on another origin (its redirects must come back here). */
function here(path: string): string {
  return apiOrigin ? `${location.origin}${path}` : path;
}

/**
 * Starts Google's or Apple's flow. The provider's callback sends a failure to `redirectTo` with
 * `?error=`; that is the sign-in page (with `next`), which shows it and forwards on success.
 */
export async function startOAuth(
  provider: "google" | "apple",
  next: string,
  link = false,
): Promise<void> {
  const back = link ? next : `/signin?next=${encodeURIComponent(next)}`;
  const answer = data(
    await client.POST("/api/auth/signin", {
      body: { provider, redirectTo: here(back), ...(link ? { link: true } : {}) },
    }),
  );
  location.assign((answer as { url: string }).url);
}

const LABELS = { google: "Google", apple: "Apple" } as const;

function OAuthButton(
  { provider, next, link }: ProviderButtonProps & { provider: "google" | "apple" },
) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const label = `${link ? "Link" : "Continue with"} ${LABELS[provider]}`;
  return (
    <div class="provider">
      <button
        type="button"
        class={`secondary provider-button provider-${provider}`}
        disabled={busy}
        onClick={async () => {
          setBusy(true);
          setError(null);
          try {
            await startOAuth(provider, next, link);
          } catch (err) {
            setError(describeError(err));
            setBusy(false);
          }
        }}
      >
        {provider === "google" && <span class="provider-mark" aria-hidden="true">G</span>}
        {busy ? `Opening ${LABELS[provider]}…` : label}
      </button>
      {error && <p class="error" role="alert">{error}</p>}
    </div>
  );
}

export function GoogleButton(props: ProviderButtonProps) {
  return <OAuthButton provider="google" {...props} />;
}

export function AppleButton(props: ProviderButtonProps) {
  return <OAuthButton provider="apple" {...props} />;
}

export function WalletButton({ next, link, onDone }: ProviderButtonProps) {
  const [state, setState] = useState<{ busy: boolean; error: string | null }>({
    busy: false,
    error: null,
  });
  const hintId = useId();
  const hasWallet = typeof (globalThis as { ethereum?: unknown }).ethereum === "object";
  return (
    <div class="provider">
      <button
        type="button"
        class="secondary provider-button provider-wallet"
        disabled={state.busy}
        aria-describedby={hasWallet ? undefined : hintId}
        onClick={async () => {
          setState({ busy: true, error: null });
          try {
            const { signInWithWallet } = await import("./siwe.ts");
            await signInWithWallet({ link });
            await loadSession();
            setState({ busy: false, error: null });
            if (onDone) onDone();
            else navigate(next, { replace: true });
          } catch (err) {
            setState({ busy: false, error: describeError(err) });
          }
        }}
      >
        <span class="provider-mark" aria-hidden="true">◆</span>
        {state.busy ? "Waiting for your wallet…" : `${link ? "Link" : "Sign in with"} a wallet`}
      </button>
      {!hasWallet && (
        <p class="hint" id={hintId}>
          Needs a browser wallet (an extension such as MetaMask) on this page.
        </p>
      )}
      {state.error && <p class="error" role="alert">{state.error}</p>}
    </div>
  );
}
