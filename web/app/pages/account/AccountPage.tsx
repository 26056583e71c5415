/**
 * The account: who you are, how you sign in (link Google, Apple or a wallet; unlink), your live
 * sessions (end one, or every one but this), your data (the export as a JSON file) and deleting
 * the account. Deleting needs a recent sign-in: the API answers 403 `reauthentication_required`,
 * and the page explains it and offers the fresh sign-in (`/signin?reauth=1`), which brings the
 * person back here with the dialog open.
 *
 * Sessions have no live events of their own; the list is read again when the tab comes back into
 * view and when a notification arrives on the user's topic (a new sign-in is one).
 */
import { useEffect, useState } from "preact/hooks";
import { download } from "../../lib/files.ts";
import { fullTime } from "../../lib/format.ts";
import { currentLocation, Link, navigate } from "../../lib/router.tsx";
import { forgetSession, session } from "../../lib/session.ts";
import { useStore } from "../../lib/store.ts";
import { stopLive } from "../../lib/live.ts";
import { userEvents } from "../../lib/user-events.ts";
import { Dialog } from "../../components/Dialog.tsx";
import {
  AppleButton,
  GoogleButton,
  type ProviderId,
  useProviders,
  WalletButton,
} from "../signin/providers.tsx";
import { ApiError, client, data, describeError, FRESH } from "../../lib/client.ts";
import { queryClient, useQuery } from "../../lib/query.ts";

/** The account's lists in the query cache. */
const IDENTITIES_KEY = ["account", "identities"] as const;
const SESSIONS_KEY = ["account", "sessions"] as const;

const PROVIDER_NAMES: Record<string, string> = {
  email: "E-mail link",
  google: "Google",
  apple: "Apple",
  wallet: "Wallet",
};

/** A short description of a browser from its user agent (the full one is in the title). */
function browserOf(userAgent: string | null): string {
  if (!userAgent) return "Unknown device";
  const browser = /Edg\//.test(userAgent)
    ? "Edge"
    : /Chrome\//.test(userAgent)
    ? "Chrome"
    : /Firefox\//.test(userAgent)
    ? "Firefox"
    : /Safari\//.test(userAgent)
    ? "Safari"
    : /Deno|curl|node/i.test(userAgent)
    ? "An API client"
    : "A browser";
  const os = /Android/.test(userAgent)
    ? "Android"
    : /iPhone|iPad/.test(userAgent)
    ? "iOS"
    : /Mac OS X/.test(userAgent)
    ? "macOS"
    : /Windows/.test(userAgent)
    ? "Windows"
    : /Linux/.test(userAgent)
    ? "Linux"
    : "";
  return os ? `${browser} on ${os}` : browser;
}

export function AccountPage() {
  const me = useStore(session).user!;
  const where = useStore(currentLocation);
  return (
    <div class="page account">
      <h1>Your account</h1>
      <section class="card" aria-labelledby="profile-h">
        <h2 id="profile-h">Profile</h2>
        <dl class="facts">
          <div>
            <dt>Name</dt>
            <dd>{me.name}</dd>
          </div>
          <div>
            <dt>E-mail</dt>
            <dd>{me.email ?? "—"}</dd>
          </div>
          <div>
            <dt>Role</dt>
            <dd>
              <span class="role-badge">{me.role}</span>
            </dd>
          </div>
          {me.walletAddress && (
            <div>
              <dt>Wallet</dt>
              <dd class="mono break">{me.walletAddress}</dd>
            </div>
          )}
        </dl>
        <p>
          <Link href="/profile" class="button secondary small" data-testid="edit-profile">
            Edit your profile
          </Link>{" "}
          <span class="muted">name, picture, bio, time zone and language</span>
        </p>
      </section>
      <Identities error={where.query.get("error")} />
      <Sessions />
      <DataSection />
      <DeleteSection openAtStart={where.query.get("delete") === "1"} />
    </div>
  );
}

function Identities({ error }: { error: string | null }) {
  const providers = useProviders();
  const query = useQuery({
    queryKey: IDENTITIES_KEY,
    queryFn: async () => data(await client.GET("/api/auth/identities", FRESH)).items,
  });
  const items = query.data ?? null;
  const [problem, setProblem] = useState<string | null>(
    error ? `Linking did not complete (${error}).` : null,
  );
  const load = () => queryClient.invalidateQueries({ queryKey: IDENTITIES_KEY });
  const linked = new Set(items?.map((i) => i.provider));
  const linkable = (providers ?? []).filter((p): p is Exclude<ProviderId, "email"> =>
    p !== "email" && (p === "wallet" || !linked.has(p))
  );
  return (
    <section class="card" aria-labelledby="identities-h">
      <h2 id="identities-h">How you sign in</h2>
      {(problem ?? query.error) && (
        <p class="error" role="alert">{problem ?? describeError(query.error)}</p>
      )}
      {items === null
        ? <p class="muted" role="status">Loading…</p>
        : (
          <ul class="plain-list" data-testid="identities">
            {items.map((i) => (
              <li key={i.id} class="row-item">
                <span>
                  <strong>{PROVIDER_NAMES[i.provider] ?? i.provider}</strong>{" "}
                  <span class="muted break">{i.address ?? i.email ?? ""}</span>
                  <br />
                  <span class="muted small">Last used {fullTime(i.lastUsedAt)}</span>
                </span>
                {i.provider !== "email" && items.length > 1 && (
                  <button
                    type="button"
                    class="secondary small"
                    aria-label={`Unlink ${PROVIDER_NAMES[i.provider]} ${
                      i.address ?? i.email ?? ""
                    }`}
                    onClick={async () => {
                      try {
                        await client.DELETE("/api/auth/identities/{id}", {
                          params: { path: { id: i.id } },
                        });
                        await load();
                      } catch (err) {
                        setProblem(describeError(err));
                      }
                    }}
                  >
                    Unlink
                  </button>
                )}
              </li>
            ))}
          </ul>
        )}
      {linkable.length > 0 && (
        <div class="link-providers">
          <p class="muted small">Add another way to sign in to this account:</p>
          {linkable.includes("google") && <GoogleButton next="/account" link />}
          {linkable.includes("apple") && <AppleButton next="/account" link />}
          {linkable.includes("wallet") && <WalletButton next="/account" link onDone={load} />}
        </div>
      )}
    </section>
  );
}

function Sessions() {
  const query = useQuery({
    queryKey: SESSIONS_KEY,
    queryFn: async () =>
      data(await client.GET("/api/auth/sessions", { params: { query: { limit: 200 } }, ...FRESH }))
        .items,
  });
  const items = query.data ?? null;
  const [actionError, setError] = useState<string | null>(null);
  const error = actionError ?? (query.error ? describeError(query.error) : null);
  const [notice, setNotice] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const load = () => {
    setError(null);
    return queryClient.invalidateQueries({ queryKey: SESSIONS_KEY });
  };
  useEffect(() => {
    const visible = () => document.visibilityState === "visible" && void load();
    document.addEventListener("visibilitychange", visible);
    const off = userEvents.on((e) => {
      if (e.event.startsWith("notification.")) void load();
    });
    return () => {
      document.removeEventListener("visibilitychange", visible);
      off();
    };
  }, []);
  const others = items?.filter((s) => !s.current).length ?? 0;
  return (
    <section class="card" aria-labelledby="sessions-h">
      <div class="card-head">
        <h2 id="sessions-h">Where you are signed in</h2>
        <button
          type="button"
          class="secondary small"
          disabled={busy || others === 0}
          onClick={async () => {
            setBusy(true);
            try {
              const { revoked } = data(
                await client.DELETE("/api/auth/sessions", {
                  params: { query: { scope: "others" } },
                }),
              );
              setNotice(
                revoked === 1
                  ? "Signed out 1 other session."
                  : `Signed out ${revoked} other sessions.`,
              );
              await load();
            } catch (err) {
              setError(describeError(err));
            } finally {
              setBusy(false);
            }
          }}
        >
          Sign out everywhere else
        </button>
      </div>
      {notice && <p class="success" role="status">{notice}</p>}
      {error && <p class="error" role="alert">{error}</p>}
      {items === null
        ? <p class="muted" role="status">Loading sessions…</p>
        : (
          <ul class="plain-list" data-testid="sessions">
            {items.map((s) => (
              <li key={s.id} class="row-item" data-session-id={s.id}>
                <span>
                  <strong title={s.userAgent ?? undefined}>{browserOf(s.userAgent)}</strong>
                  {s.current && <span class="pill ok">This device</span>}
                  <br />
                  <span class="muted small">
                    {PROVIDER_NAMES[s.provider] ?? s.provider} · signed in {fullTime(s.createdAt)}
                    {" "}
                    · last seen {fullTime(s.lastSeenAt)}
                    {s.ip ? ` · ${s.ip}` : ""}
                  </span>
                </span>
                {!s.current && (
                  <button
                    type="button"
                    class="secondary small"
                    aria-label={`End the session of ${browserOf(s.userAgent)} signed in ${
                      fullTime(s.createdAt)
                    }`}
                    onClick={async () => {
                      try {
                        await client.DELETE("/api/auth/sessions/{id}", {
                          params: { path: { id: s.id } },
                        });
                        setNotice("That session has ended.");
                        await load();
                      } catch (err) {
                        setError(describeError(err));
                      }
                    }}
                  >
                    End
                  </button>
                )}
              </li>
            ))}
          </ul>
        )}
    </section>
  );
}

function DataSection() {
  const [state, setState] = useState<{ busy: boolean; done?: string; error?: string }>({
    busy: false,
  });
  return (
    <section class="card" aria-labelledby="data-h">
      <h2 id="data-h">Your data</h2>
      <p>
        Download everything the platform holds about you as one JSON file: profile, sign-in methods,
        sessions, conversations and messages, notifications, orders, your shop and your wallet's
        public data (never a key or a token).
      </p>
      <button
        type="button"
        class="secondary"
        disabled={state.busy}
        onClick={async () => {
          setState({ busy: true });
          try {
            const name = await download("/api/account/export", "account-export.json");
            setState({ busy: false, done: `Saved ${name}.` });
          } catch (err) {
            setState({ busy: false, error: describeError(err) });
          }
        }}
      >
        {state.busy ? "Preparing…" : "Download my data"}
      </button>
      {state.done && <p class="success" role="status">{state.done}</p>}
      {state.error && <p class="error" role="alert">{state.error}</p>}
    </section>
  );
}

const CONFIRM = "delete my account";

function DeleteSection({ openAtStart }: { openAtStart: boolean }) {
  const [open, setOpen] = useState(openAtStart);
  const [typed, setTyped] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [reauth, setReauth] = useState<{ seconds: number; at: string | null } | null>(null);
  const close = () => {
    setOpen(false);
    setTyped("");
    setError(null);
    setReauth(null);
  };
  return (
    <section class="card danger-zone" aria-labelledby="delete-h">
      <h2 id="delete-h">Delete your account</h2>
      <p>
        Your profile, sessions and personal data go at once; your messages become “deleted”
        placeholders, and orders others keep lose your name and address. This cannot be undone.
      </p>
      <button type="button" class="danger" onClick={() => setOpen(true)}>
        Delete my account…
      </button>
      <Dialog open={open} title="Delete your account" onClose={close}>
        <form
          onSubmit={async (e) => {
            e.preventDefault();
            if (typed.trim().toLowerCase() !== CONFIRM) {
              return setError(`Type “${CONFIRM}” to confirm.`);
            }
            setBusy(true);
            setError(null);
            try {
              await client.DELETE("/api/account", {
                body: { confirm: "delete my account" },
              });
              stopLive();
              forgetSession("deleted");
              navigate("/signin", { replace: true });
            } catch (err) {
              if (err instanceof ApiError && err.code === "reauthentication_required") {
                const details = err.details as
                  | { freshSignInSeconds?: number; authTime?: string }
                  | undefined;
                setReauth({
                  seconds: details?.freshSignInSeconds ?? 600,
                  at: details?.authTime ?? null,
                });
              } else setError(describeError(err));
            } finally {
              setBusy(false);
            }
          }}
        >
          {reauth
            ? (
              <div class="notice" role="alert" data-testid="reauth-needed">
                <p>
                  <strong>Please sign in again first.</strong>{" "}
                  Deleting an account needs a sign-in from the last{" "}
                  {Math.round(reauth.seconds / 60)} minutes
                  {reauth.at ? `; yours was ${fullTime(reauth.at)}` : ""}. This keeps someone who
                  found your device unlocked from deleting it.
                </p>
                <button
                  type="button"
                  onClick={() =>
                    navigate(
                      `/signin?reauth=1&next=${encodeURIComponent("/account?delete=1")}`,
                    )}
                >
                  Sign in again
                </button>
              </div>
            )
            : (
              <>
                <label for="delete-confirm">
                  Type <strong>{CONFIRM}</strong> to confirm
                </label>
                <input
                  id="delete-confirm"
                  autocomplete="off"
                  value={typed}
                  onInput={(e) => setTyped(e.currentTarget.value)}
                />
              </>
            )}
          {error && <p class="error" role="alert">{error}</p>}
          <div class="dialog-actions">
            <button type="button" class="secondary" onClick={close}>Cancel</button>
            {!reauth && (
              <button type="submit" class="danger" disabled={busy}>
                {busy ? "Deleting…" : "Delete for good"}
              </button>
            )}
          </div>
        </form>
      </Dialog>
    </section>
  );
}
