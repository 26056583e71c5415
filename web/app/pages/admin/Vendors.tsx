/**
 * Vendors to review: applications (pending first), with the owner's details and the decision
 * history; approve (optionally with the shop's own commission), reject, suspend, always with a
 * reason. The owner sees the decision live (`vendor.status_changed` on their topic).
 */
import { useEffect, useId, useState } from "preact/hooks";
import { useFormReset } from "../../lib/form-reset.ts";
import {
  client,
  data,
  describeError,
  FRESH,
  type Query,
  type RequestBody,
} from "../../lib/client.ts";
import { fullTime } from "../../lib/format.ts";
import { Dialog } from "../../components/Dialog.tsx";
import { Pill } from "../../components/Pill.tsx";
import { statusTone } from "../store/types.ts";
import type { Vendor } from "./types.ts";

const decideVendor = async (
  id: string,
  body: RequestBody<"/api/admin/vendors/{id}/status", "put">,
) => data(await client.PUT("/api/admin/vendors/{id}/status", { params: { path: { id } }, body }));

type Decision = "approved" | "rejected" | "suspended";

/** The moves the API allows from each status (others answer 422 invalid_transition). */
const MOVES: Record<Vendor["status"], Decision[]> = {
  pending: ["approved", "rejected"],
  approved: ["suspended"],
  suspended: ["approved"],
  rejected: [],
};

const VERB: Record<Decision, string> = {
  approved: "Approve",
  rejected: "Reject",
  suspended: "Suspend",
};

export function VendorsSection({ refresh }: { refresh: number }) {
  const [status, setStatus] = useState("pending");
  const [search, setSearch] = useState("");
  const [items, setItems] = useState<Vendor[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [deciding, setDeciding] = useState<{ vendor: Vendor; to: Decision } | null>(null);
  const statusId = useId();
  const searchId = useId();
  const filters = { status, search: search.trim(), limit: 25 };
  useEffect(() => {
    const timer = setTimeout(() => {
      client.GET("/api/admin/vendors", {
        params: { query: filters as Query<"/api/admin/vendors", "get"> },
        ...FRESH,
      }).then(data).then((page) => {
        setItems(page.items);
        setCursor(page.nextCursor);
        setError(null);
      }).catch((err) => setError(describeError(err)));
    }, 150);
    return () => clearTimeout(timer);
  }, [status, search, refresh]);

  return (
    <section>
      <h1>Vendors</h1>
      <form class="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <div>
          <label for={statusId}>Status</label>
          <select id={statusId} value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
            <option value="pending">Waiting for review</option>
            <option value="approved">Approved</option>
            <option value="suspended">Suspended</option>
            <option value="rejected">Rejected</option>
            <option value="">All</option>
          </select>
        </div>
        <div>
          <label for={searchId}>Search name</label>
          <input
            id={searchId}
            type="search"
            value={search}
            onInput={(e) => setSearch(e.currentTarget.value)}
          />
        </div>
      </form>
      {notice && <p class="success" role="status">{notice}</p>}
      {error && <p class="error" role="alert">{error}</p>}
      {items === null
        ? <p class="muted" role="status">Loading vendors…</p>
        : items.length === 0
        ? <p>No vendor here.</p>
        : (
          <ul class="plain-list vendor-list" data-testid="admin-vendors">
            {items.map((v) => (
              <li key={v.id} class="card" data-vendor-id={v.id}>
                <div class="card-head">
                  <h2>{v.name}</h2>
                  <Pill tone={statusTone(v.status)} testId="vendor-status">{v.status}</Pill>
                </div>
                <p>{v.description || <span class="muted">No description.</span>}</p>
                <p class="muted small">
                  Applied {fullTime(v.createdAt)} · {v.contactEmail ?? "no contact"} ·{" "}
                  {v.country ?? "—"} · commission{" "}
                  {v.commissionBps !== undefined ? `${(v.commissionBps / 100).toFixed(2)}%` : "—"}
                  {" "}
                  · payouts {v.payouts.status}
                </p>
                {v.decisions && v.decisions.length > 0 && (
                  <details>
                    <summary>Decisions ({v.decisions.length})</summary>
                    <ol class="history">
                      {v.decisions.map((d, i) => (
                        <li key={i}>
                          {d.from} → <strong>{d.to}</strong>{" "}
                          <span class="muted small">{fullTime(d.at)} · “{d.reason}”</span>
                        </li>
                      ))}
                    </ol>
                  </details>
                )}
                <div class="actions">
                  {MOVES[v.status].map((to) => (
                    <button
                      key={to}
                      type="button"
                      class={to === "approved" ? "small" : "secondary small"}
                      aria-label={`${VERB[to]} ${v.name}`}
                      onClick={() => setDeciding({ vendor: v, to })}
                    >
                      {VERB[to]}
                    </button>
                  ))}
                </div>
              </li>
            ))}
          </ul>
        )}
      {cursor && (
        <button
          type="button"
          class="secondary"
          onClick={async () => {
            try {
              const page = await client.GET("/api/admin/vendors", {
                params: { query: { ...filters, cursor } as Query<"/api/admin/vendors", "get"> },
                ...FRESH,
              }).then(data);
              setItems([...(items ?? []), ...page.items]);
              setCursor(page.nextCursor);
            } catch (err) {
              setError(describeError(err));
            }
          }}
        >
          Load more
        </button>
      )}
      <DecisionDialog
        deciding={deciding}
        onClose={() => setDeciding(null)}
        onDone={(vendor) => {
          setDeciding(null);
          setNotice(`${vendor.name} is now ${vendor.status}.`);
          setItems((list) =>
            list?.map((v) => v.id === vendor.id ? vendor : v).filter((v) =>
              !status || v.status === status
            ) ?? list
          );
        }}
      />
    </section>
  );
}

function DecisionDialog(
  { deciding, onClose, onDone }: {
    deciding: { vendor: Vendor; to: Decision } | null;
    onClose: () => void;
    onDone: (v: Vendor) => void;
  },
) {
  const reasonId = useId();
  const commissionId = useId();
  const [reason, setReason] = useState("");
  const [commission, setCommission] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useFormReset(() => {
    setReason("");
    setCommission("");
    setError(null);
  }, [deciding?.vendor.id, deciding?.to]);
  return (
    <Dialog
      open={deciding !== null}
      title={deciding ? `${VERB[deciding.to]} ${deciding.vendor.name}` : ""}
      onClose={onClose}
    >
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          if (!deciding) return;
          if (!reason.trim()) return setError("Give a reason: the owner sees it.");
          let commissionBps: number | undefined;
          if (commission.trim()) {
            const pct = Number(commission);
            if (!Number.isFinite(pct) || pct < 0 || pct > 100) {
              return setError("The commission is a percentage from 0 to 100.");
            }
            commissionBps = Math.round(pct * 100);
          }
          setBusy(true);
          try {
            onDone(
              await decideVendor(deciding.vendor.id, {
                status: deciding.to,
                reason: reason.trim(),
                ...(commissionBps !== undefined ? { commissionBps } : {}),
              }),
            );
          } catch (err) {
            setError(describeError(err));
          } finally {
            setBusy(false);
          }
        }}
      >
        {deciding?.to === "suspended" && (
          <p>Its products leave the catalog and it cannot sell until approved again.</p>
        )}
        <label for={reasonId}>Reason (the owner sees it)</label>
        <textarea
          id={reasonId}
          aria-required="true"
          maxLength={1000}
          value={reason}
          onInput={(e) => setReason(e.currentTarget.value)}
        />
        {deciding?.to === "approved" && (
          <>
            <label for={commissionId}>Commission % (empty: the store's default)</label>
            <input
              id={commissionId}
              inputMode="decimal"
              value={commission}
              onInput={(e) => setCommission(e.currentTarget.value)}
            />
          </>
        )}
        {error && <p class="error" role="alert">{error}</p>}
        <div class="dialog-actions">
          <button type="button" class="secondary" onClick={onClose}>Cancel</button>
          <button
            type="submit"
            class={deciding?.to === "approved" ? "" : "danger"}
            disabled={busy}
          >
            {deciding ? VERB[deciding.to] : ""}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
