/**
 * The moderation queue: open reports, oldest first, each with the subject as first reported
 * (the snapshot), the reporter, reason, note and how many open reports its subject has; resolved
 * by dismissing it or with an action that fits the subject, and always a note
 * (docs/moderation.md).
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
import type { AdminReport, ReportAction } from "./types.ts";

const resolveReport = async (id: string, body: RequestBody<"/api/admin/reports/{id}", "put">) =>
  data(await client.PUT("/api/admin/reports/{id}", { params: { path: { id } }, body }));

const ACTIONS: Record<AdminReport["subject"]["type"], { value: ReportAction; label: string }[]> = {
  message: [
    { value: "delete_message", label: "Delete the message" },
    { value: "suspend_user", label: "Suspend the sender" },
  ],
  user: [{ value: "suspend_user", label: "Suspend the user" }],
  product: [{ value: "hide_product", label: "Hide the product" }],
  vendor: [],
};

function Snapshot({ report }: { report: AdminReport }) {
  const s = report.snapshot as Record<string, unknown> & {
    sender?: { name: string } | null;
    vendor?: { name: string };
  };
  switch (report.subject.type) {
    case "message":
      return (
        <blockquote class="snapshot" data-testid="snapshot">
          <strong>{s.sender?.name ?? "Deleted user"}</strong>: {String(s.content ?? "")}
        </blockquote>
      );
    case "user":
      return (
        <blockquote class="snapshot" data-testid="snapshot">
          <strong>{String(s.name)}</strong> {s.bio ? `— ${s.bio}` : ""}
        </blockquote>
      );
    case "product":
      return (
        <blockquote class="snapshot" data-testid="snapshot">
          <strong>{String(s.title)}</strong> by {s.vendor?.name}: {String(s.description ?? "")}
        </blockquote>
      );
    default:
      return (
        <blockquote class="snapshot" data-testid="snapshot">
          <strong>{String(s.name)}</strong>: {String(s.description ?? "")}
        </blockquote>
      );
  }
}

export function ModerationSection({ refresh }: { refresh: number }) {
  const [status, setStatus] = useState("open");
  const [items, setItems] = useState<AdminReport[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [resolving, setResolving] = useState<AdminReport | null>(null);
  const statusId = useId();
  useEffect(() => {
    client.GET("/api/admin/reports", {
      params: { query: { status, limit: 25 } as Query<"/api/admin/reports", "get"> },
      ...FRESH,
    }).then(data).then((page) => {
      setItems(page.items);
      setCursor(page.nextCursor);
      setError(null);
    }).catch((err) => setError(describeError(err)));
  }, [status, refresh]);

  return (
    <section>
      <h1>Moderation</h1>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <div>
          <label for={statusId}>Status</label>
          <select id={statusId} value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
            <option value="open">Open</option>
            <option value="actioned">Actioned</option>
            <option value="dismissed">Dismissed</option>
          </select>
        </div>
      </form>
      {notice && <p class="success" role="status">{notice}</p>}
      {error && <p class="error" role="alert">{error}</p>}
      {items === null
        ? <p class="muted" role="status">Loading reports…</p>
        : items.length === 0
        ? <p>No report here.</p>
        : (
          <ul class="plain-list" data-testid="reports">
            {items.map((r) => (
              <li key={r.id} class="card" data-report-id={r.id}>
                <div class="card-head">
                  <h2>{r.subject.type} reported for {r.reason}</h2>
                  {r.reportCount > 1 && <span class="muted">{r.reportCount} open reports</span>}
                </div>
                <Snapshot report={r} />
                <p class="muted small">
                  By {r.reporter.name} · {fullTime(r.createdAt)}
                  {r.note ? ` · “${r.note}”` : ""}
                </p>
                {r.status === "open"
                  ? (
                    <div class="actions">
                      <button type="button" class="small" onClick={() => setResolving(r)}>
                        Resolve
                      </button>
                    </div>
                  )
                  : (
                    <p class="small">
                      {r.status}
                      {r.action ? ` (${r.action})` : ""} · “{r.resolutionNote}”
                    </p>
                  )}
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
              const page = data(
                await client.GET("/api/admin/reports", {
                  params: {
                    query: { status, cursor, limit: 25 } as Query<"/api/admin/reports", "get">,
                  },
                  ...FRESH,
                }),
              );
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
      <ResolveDialog
        report={resolving}
        onClose={() => setResolving(null)}
        onDone={(done) => {
          setResolving(null);
          setNotice(`Report resolved: ${done.status}${done.action ? ` (${done.action})` : ""}.`);
          setItems((list) =>
            list?.filter((r) =>
              !(r.subject.type === done.subject.type && r.subject.id === done.subject.id)
            ) ?? list
          );
        }}
      />
    </section>
  );
}

function ResolveDialog(
  { report, onClose, onDone }: {
    report: AdminReport | null;
    onClose: () => void;
    onDone: (r: AdminReport) => void;
  },
) {
  const actionId = useId();
  const noteId = useId();
  const [action, setAction] = useState("");
  const [note, setNote] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useFormReset(() => {
    setAction("");
    setNote("");
    setError(null);
  }, [report?.id]);
  return (
    <Dialog open={report !== null} title="Resolve the report" onClose={onClose}>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          if (!report) return;
          if (!note.trim()) return setError("Write a note: it is kept with the resolution.");
          setBusy(true);
          try {
            onDone(
              await resolveReport(report.id, {
                status: action ? "actioned" : "dismissed",
                ...(action ? { action: action as ReportAction } : {}),
                note: note.trim(),
              }),
            );
          } catch (err) {
            setError(describeError(err));
          } finally {
            setBusy(false);
          }
        }}
      >
        <label for={actionId}>Action</label>
        <select id={actionId} value={action} onChange={(e) => setAction(e.currentTarget.value)}>
          <option value="">Dismiss (no breach)</option>
          {report &&
            ACTIONS[report.subject.type].map((a) => (
              <option key={a.value} value={a.value}>{a.label}</option>
            ))}
        </select>
        <label for={noteId}>Note</label>
        <textarea
          id={noteId}
          maxLength={1000}
          value={note}
          onInput={(e) => setNote(e.currentTarget.value)}
        />
        {error && <p class="error" role="alert">{error}</p>}
        <div class="actions">
          <button type="submit" disabled={busy}>Resolve</button>
          <button type="button" class="secondary" onClick={onClose}>Cancel</button>
        </div>
      </form>
    </Dialog>
  );
}
