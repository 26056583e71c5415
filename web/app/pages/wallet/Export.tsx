/**
 * Exporting the wallet's private key. The page makes a one-time P-256 key pair, sends only its
 * public half, and decrypts the answer (a compact JWE) in the browser (jwe.ts). The key is shown
 * once, with a copy button, and never stored: it lives in this component's state until the person
 * hides it or leaves the page. Needs a recent sign-in (403 `reauthentication_required`: the page
 * explains and offers it); a few exports a day at most; the owner is notified of each.
 */
import { useEffect, useState } from "preact/hooks";
import { ApiError, client, data, describeError, type RequestBody } from "../../lib/client.ts";
import { fullTime } from "../../lib/format.ts";
import { navigate } from "../../lib/router.tsx";
import { CopyButton } from "../../components/CopyButton.tsx";
import type { Wallet } from "./types.ts";
import { decryptCompactJwe, oneTimeKey } from "./jwe.ts";

export function Export({ wallet }: { wallet: Wallet }) {
  const [understood, setUnderstood] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [reauth, setReauth] = useState<number | null>(null);
  const [key, setKey] = useState<{ address: string; privateKey: string } | null>(null);
  // Gone when the page goes: nothing of it is kept.
  useEffect(() => () => setKey(null), []);

  async function exportKey() {
    setBusy(true);
    setError(null);
    setReauth(null);
    try {
      const pair = await oneTimeKey();
      const { address, jwe } = data(
        await client.POST("/api/wallet/export", {
          body: {
            publicKey: pair.publicJwk as RequestBody<"/api/wallet/export", "post">["publicKey"],
          },
        }),
      );
      const privateKey = await decryptCompactJwe(jwe, pair.privateKey);
      if (!/^0x[0-9a-fA-F]{64}$/.test(privateKey)) {
        throw new Error("The decrypted key is malformed.");
      }
      setKey({ address, privateKey });
    } catch (err) {
      if (err instanceof ApiError && err.code === "reauthentication_required") {
        setReauth(
          (err.details as { freshSignInSeconds?: number } | undefined)?.freshSignInSeconds ?? 600,
        );
      } else if (err instanceof ApiError && err.status === 429) {
        setError("You have exported this key as often as a day allows. Try again tomorrow.");
      } else setError(describeError(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <section>
      <h1>Export your key</h1>
      <div class="notice warn">
        <p>
          <strong>Anyone with this key controls the wallet</strong>{" "}
          (<span class="break">{wallet.address}</span>): its tokens and NFTs, on any app, for good.
          Keep it offline; never paste it into a website or a message. Each export is recorded and
          you are notified of it.
        </p>
      </div>
      {wallet.exportedAt && <p class="muted">Last exported {fullTime(wallet.exportedAt)}.</p>}
      {key
        ? (
          <div class="card" data-testid="exported-key">
            <p>
              The private key of{" "}
              <span class="mono break">{key.address}</span>. It is shown this once: copy it
              somewhere safe now.
            </p>
            <label for="exported-key">Private key</label>
            <textarea
              id="exported-key"
              class="mono secret"
              readOnly
              rows={2}
              value={key.privateKey}
              onFocus={(e) => e.currentTarget.select()}
            />
            <div class="actions">
              <CopyButton text={key.privateKey} label="Copy the key" />
              <button type="button" class="secondary" onClick={() => setKey(null)}>
                I have saved it: hide it
              </button>
            </div>
          </div>
        )
        : (
          <div class="card">
            <label class="check">
              <input
                type="checkbox"
                checked={understood}
                onChange={(e) => setUnderstood(e.currentTarget.checked)}
              />{" "}
              I understand that anyone who sees this key can take everything in the wallet.
            </label>
            {reauth !== null && (
              <div class="notice" role="alert" data-testid="reauth-needed">
                <p>
                  <strong>Please sign in again first.</strong>{" "}
                  Exporting the key needs a sign-in from the last {Math.round(reauth / 60)}{" "}
                  minutes, so that a session left open on some device is not enough to take your
                  funds.
                </p>
                <button
                  type="button"
                  onClick={() =>
                    navigate(`/signin?reauth=1&next=${encodeURIComponent("/wallet/export")}`)}
                >
                  Sign in again
                </button>
              </div>
            )}
            {error && <p class="error" role="alert">{error}</p>}
            {reauth === null && (
              <div class="actions">
                <button
                  type="button"
                  class="danger"
                  disabled={!understood || busy}
                  onClick={exportKey}
                >
                  {busy ? "Exporting…" : "Show my private key"}
                </button>
              </div>
            )}
          </div>
        )}
    </section>
  );
}
