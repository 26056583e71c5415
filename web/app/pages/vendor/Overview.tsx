/** The shop's overview (status, balances, payouts) and the application form. */
import { useId, useState } from "preact/hooks";
import { fullTime, money } from "../../lib/format.ts";
import { Link } from "../../lib/router.tsx";
import { session } from "../../lib/session.ts";
import { useStore } from "../../lib/store.ts";
import { Pill } from "../../components/Pill.tsx";
import { CountrySelect } from "../../components/CountrySelect.tsx";
import { likelyCountry } from "../../lib/countries.ts";
import { type OwnVendor, statusTone } from "../store/types.ts";
import { apiOrigin, client, data, describeError } from "../../lib/client.ts";

const STATUS_TEXT: Record<string, string> = {
  pending: "Your application is waiting for an administrator. This page updates when they decide.",
  approved: "Your shop is open: its active products are in the catalog.",
  suspended: "Your shop is suspended: its products are out of the catalog and it cannot sell.",
};

const PAYOUTS: Record<string, string> = {
  not_started: "Not set up",
  pending: "Being verified",
  active: "Active",
  restricted: "Restricted: the provider needs more details",
};

export function Overview({ vendor, onChanged }: { vendor: OwnVendor; onChanged: () => void }) {
  const [payouts, setPayouts] = useState<{ busy: boolean; error?: string; done?: string }>({
    busy: false,
  });
  const last = vendor.decisions?.[vendor.decisions.length - 1];
  return (
    <section>
      <div class="card-head">
        <h1>{vendor.name}</h1>
        <Pill tone={statusTone(vendor.status)} testId="vendor-status">{vendor.status}</Pill>
      </div>
      <p>{STATUS_TEXT[vendor.status]}</p>
      {last && vendor.status !== "approved" && (
        <p class="muted">Last decision, {fullTime(last.at)}: “{last.reason}”</p>
      )}
      {vendor.description && <p class="muted">{vendor.description}</p>}
      {vendor.status === "approved" && (
        <p>
          <Link href={`/store?vendorId=${vendor.id}`}>See the shop in the catalog</Link>
        </p>
      )}
      <dl class="tiles">
        <div>
          <dt>Sold, not settled yet</dt>
          <dd data-testid="balance-pending">{money(vendor.balances.pending)}</dd>
        </div>
        <div>
          <dt>Settled, awaiting payout</dt>
          <dd>{money(vendor.balances.awaitingPayout)}</dd>
        </div>
        <div>
          <dt>Paid out</dt>
          <dd>{money(vendor.balances.settled)}</dd>
        </div>
      </dl>
      <section class="card" aria-labelledby="payouts-h">
        <h2 id="payouts-h">Payouts</h2>
        <p>
          Payout account: <strong>{PAYOUTS[vendor.payouts.status]}</strong>
          {vendor.commissionBps !== undefined &&
            ` · commission ${(vendor.commissionBps / 100).toFixed(2)}%`}
        </p>
        {vendor.payouts.status !== "active" && vendor.status !== "pending" && (
          <button
            type="button"
            class="secondary"
            disabled={payouts.busy}
            onClick={async () => {
              setPayouts({ busy: true });
              try {
                const { url } = data(await client.POST("/api/store/vendors/me/payouts"));
                const target = new URL(url, location.href);
                // The dev provider's onboarding is a local stand-in: complete it in place (plain
                // fetch: `/_dev` is the local stack's, not the API's, and has no typed path).
                if (target.pathname.startsWith("/_dev/accounts/")) {
                  const r = await fetch(`${apiOrigin}${target.pathname}`, { method: "POST" });
                  if (!r.ok) throw new Error(`The dev provider answered ${r.status}.`);
                  setPayouts({ busy: false, done: "Payout account set up (dev provider)." });
                  setTimeout(onChanged, 500);
                } else location.assign(target.toString());
              } catch (err) {
                setPayouts({ busy: false, error: describeError(err) });
              }
            }}
          >
            Set up payouts
          </button>
        )}
        {payouts.done && <p class="success" role="status">{payouts.done}</p>}
        {payouts.error && <p class="error" role="alert">{payouts.error}</p>}
      </section>
    </section>
  );
}

export function ApplyForm({ onApplied }: { onApplied: () => void }) {
  const me = useStore(session).user!;
  const ids = { name: useId(), description: useId(), email: useId(), country: useId() };
  const [form, setForm] = useState({
    name: "",
    description: "",
    contactEmail: me.email ?? "",
    // The browser's country first, as the shipping address does; the person changes it.
    country: likelyCountry(),
  });
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const set = (key: keyof typeof form) => (e: { currentTarget: { value: string } }) =>
    setForm({ ...form, [key]: e.currentTarget.value });
  return (
    <form
      class="card"
      onSubmit={async (e) => {
        e.preventDefault();
        const country = form.country;
        if (form.name.trim().length < 2) return setError("Give the shop a name.");
        if (!country) return setError("Choose the country the shop is in.");
        setBusy(true);
        setError(null);
        try {
          await client.POST("/api/store/vendors/apply", {
            body: {
              name: form.name.trim(),
              description: form.description.trim(),
              contactEmail: form.contactEmail.trim(),
              country,
            },
          });
          onApplied();
        } catch (err) {
          setError(describeError(err));
        } finally {
          setBusy(false);
        }
      }}
    >
      <p>
        Tell us about your shop. An administrator reviews every application; you can add products
        once it is approved.
      </p>
      <label for={ids.name}>Shop name</label>
      <input id={ids.name} value={form.name} onInput={set("name")} maxLength={100} />
      <label for={ids.description}>What you sell</label>
      <textarea
        id={ids.description}
        value={form.description}
        onInput={set("description")}
        maxLength={5000}
      />
      <label for={ids.email}>Contact e-mail</label>
      <input
        id={ids.email}
        type="email"
        autocomplete="email"
        value={form.contactEmail}
        onInput={set("contactEmail")}
      />
      <label for={ids.country}>Country</label>
      <CountrySelect
        id={ids.country}
        value={form.country}
        onChange={(country) => setForm({ ...form, country })}
      />
      {error && <p class="error" role="alert">{error}</p>}
      <div class="actions">
        <button type="submit" disabled={busy}>{busy ? "Sending…" : "Apply to sell"}</button>
      </div>
    </form>
  );
}
