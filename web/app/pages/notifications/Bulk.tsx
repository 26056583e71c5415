/**
 * A bulk send (ADMIN): audience (everyone, roles, or people chosen by name: PeoplePicker.tsx), type, title, text, channels and
 * priority, then the batch's progress until it is done (`GET /api/notifications/bulk/:id`, read
 * every second: the API emits no event for a batch).
 *
 * The `Idempotency-Key` belongs to the form's content: made when the form opens, made anew when a
 * field changes or a send succeeded. Pressing "Send" twice (a double click, a retry after a lost
 * answer) sends the same key with the same body, which the API answers with the same batch; the
 * page also sends nothing while a send is under way.
 */
import { useEffect, useId, useRef, useState } from "preact/hooks";
import { ApiError, client, data, describeError, FRESH } from "../../lib/client.ts";
import { type Role, ROLES } from "../../lib/session.ts";
import { Pill } from "../../components/Pill.tsx";
import { PeoplePicker, type Person } from "./PeoplePicker.tsx";
import {
  type Batch,
  type BatchProgress,
  type BulkRequest,
  type Channel,
  CHANNEL_LABELS,
  CHANNELS,
  type NotificationType,
  PRIORITIES,
  type Priority,
  TYPE_LABELS,
  TYPES,
} from "./types.ts";

interface Draft {
  audience: "all" | "roles" | "users";
  roles: Role[];
  people: Person[];
  type: NotificationType;
  title: string;
  body: string;
  priority: Priority;
  channels: Channel[];
}

const EMPTY: Draft = {
  audience: "roles",
  roles: [],
  people: [],
  type: "SYSTEM",
  title: "",
  body: "",
  priority: "normal",
  channels: ["inApp", "push"],
};

const PRIORITY_LABELS: Record<Priority, string> = {
  low: "Low",
  normal: "Normal",
  high: "High",
  critical: "Critical (ignores preferences and quiet hours)",
};

interface Sent {
  batch: Batch;
  title: string;
  audience: string;
  progress: BatchProgress | null;
  error: string | null;
}

function requestOf(d: Draft): BulkRequest {
  const audience: BulkRequest["audience"] = d.audience === "all"
    ? { all: true }
    : d.audience === "roles"
    ? { roles: d.roles }
    : { userIds: d.people.map((p) => p.id) };
  return {
    audience,
    notification: { type: d.type, title: d.title, body: d.body, priority: d.priority },
    channels: d.channels,
  };
}

function audienceText(d: Draft): string {
  if (d.audience === "all") return "everyone";
  if (d.audience === "roles") return d.roles.join(", ");
  const n = d.people.length;
  return n === 1 ? "1 person" : `${n} people`;
}

const STATUS = { queued: "Queued", sending: "Sending", done: "Done" };

export function BulkForm() {
  const [draft, setDraft] = useState<Draft>(EMPTY);
  const [error, setError] = useState<{ message: string; fields: string[] } | null>(null);
  const [busy, setBusy] = useState(false);
  const [sent, setSent] = useState<Sent[]>([]);
  const key = useRef(crypto.randomUUID());
  const sending = useRef(false);
  // After a send, the focus moves to its progress (and the page scrolls there).
  const sentHeading = useRef<HTMLHeadingElement>(null);
  const [focusSent, setFocusSent] = useState(0);
  useEffect(() => {
    if (!focusSent || !sentHeading.current) return;
    sentHeading.current.focus({ preventScroll: true });
    sentHeading.current.scrollIntoView({ block: "start" });
  }, [focusSent]);
  const base = useId();
  const id = (name: string) => `${base}-${name}`;

  const edit = (change: Partial<Draft>) => {
    key.current = crypto.randomUUID();
    setDraft({ ...draft, ...change });
  };

  // Progress of the batches not done yet, every second.
  const open = sent.filter((s) => s.progress?.status !== "done").map((s) => s.batch.id);
  useEffect(() => {
    if (!open.length) return;
    const timer = setTimeout(async () => {
      const answers = await Promise.all(
        open.map((batchId) =>
          client.GET("/api/notifications/bulk/{id}", {
            params: { path: { id: batchId } },
            ...FRESH,
          }).then(data).then(
            (progress) => ({ batchId, progress, error: null }),
            (err) => ({ batchId, progress: null, error: describeError(err) }),
          )
        ),
      );
      setSent((list) =>
        list.map((s) => {
          const a = answers.find((x) => x.batchId === s.batch.id);
          return a ? { ...s, progress: a.progress ?? s.progress, error: a.error } : s;
        })
      );
    }, 1_000);
    return () => clearTimeout(timer);
  }, [sent]);

  async function send(e: Event) {
    e.preventDefault();
    if (sending.current) return;
    if (draft.audience === "roles" && !draft.roles.length) {
      setError({ message: "Choose at least one role.", fields: [] });
      return;
    }
    if (draft.audience === "users" && !draft.people.length) {
      setError({ message: "Choose at least one person.", fields: [] });
      return;
    }
    if (!draft.channels.length) {
      setError({ message: "Choose at least one channel.", fields: [] });
      return;
    }
    sending.current = true;
    setBusy(true);
    setError(null);
    try {
      const batch = data(
        await client.POST("/api/notifications/bulk", {
          body: requestOf(draft),
          headers: { "idempotency-key": key.current },
        }),
      );
      key.current = crypto.randomUUID();
      setSent((list) => [
        { batch, title: draft.title, audience: audienceText(draft), progress: null, error: null },
        ...list.filter((s) => s.batch.id !== batch.id),
      ]);
      setFocusSent((n) => n + 1);
    } catch (err) {
      setError({
        message: describeError(err),
        fields: err instanceof ApiError && Array.isArray(err.details)
          ? (err.details as { path: string; message: string }[]).map((f) =>
            `${f.path}: ${f.message}`
          )
          : [],
      });
    } finally {
      sending.current = false;
      setBusy(false);
    }
  }

  return (
    <section class="bulk">
      <h1>Send a notification to many</h1>
      <form onSubmit={send} class="bulk-form">
        <fieldset class="card">
          <legend>Who receives it</legend>
          <p class="muted small">Suspended accounts never do. Each person's preferences apply.</p>
          {(
            [
              ["all", "Everyone"],
              ["roles", "People with a role"],
              ["users", "Particular people"],
            ] as const
          ).map(([value, label]) => (
            <div class="check" key={value}>
              <input
                type="radio"
                name={id("audience")}
                id={id(`audience-${value}`)}
                checked={draft.audience === value}
                onChange={() => edit({ audience: value })}
              />
              <label for={id(`audience-${value}`)}>{label}</label>
            </div>
          ))}
          {draft.audience === "roles" && (
            <fieldset class="inline-checks">
              <legend>Roles</legend>
              {ROLES.map((role) => (
                <span class="check" key={role}>
                  <input
                    type="checkbox"
                    id={id(`role-${role}`)}
                    checked={draft.roles.includes(role)}
                    onChange={(e) =>
                      edit({
                        roles: e.currentTarget.checked
                          ? [...draft.roles, role]
                          : draft.roles.filter((r) => r !== role),
                      })}
                  />
                  <label for={id(`role-${role}`)}>{role}</label>
                </span>
              ))}
            </fieldset>
          )}
          {draft.audience === "users" && (
            <PeoplePicker
              chosen={draft.people}
              onChange={(people) => edit({ people })}
            />
          )}
        </fieldset>

        <fieldset class="card">
          <legend>The notification</legend>
          <div class="fields">
            <div>
              <label for={id("type")}>Type</label>
              <select
                id={id("type")}
                value={draft.type}
                onChange={(e) => edit({ type: e.currentTarget.value as NotificationType })}
              >
                {TYPES.map((t) => <option key={t} value={t}>{TYPE_LABELS[t]}</option>)}
              </select>
            </div>
            <div>
              <label for={id("priority")}>Priority</label>
              <select
                id={id("priority")}
                value={draft.priority}
                onChange={(e) => edit({ priority: e.currentTarget.value as Priority })}
              >
                {PRIORITIES.map((p) => <option key={p} value={p}>{PRIORITY_LABELS[p]}</option>)}
              </select>
            </div>
          </div>
          <label for={id("title")}>Title</label>
          <input
            id={id("title")}
            required
            maxLength={200}
            value={draft.title}
            onInput={(e) => edit({ title: e.currentTarget.value })}
          />
          <label for={id("body")}>Text</label>
          <textarea
            id={id("body")}
            rows={4}
            maxLength={2000}
            value={draft.body}
            onInput={(e) => edit({ body: e.currentTarget.value })}
          />
          <fieldset class="inline-checks">
            <legend>Channels</legend>
            {CHANNELS.map((c) => (
              <span class="check" key={c}>
                <input
                  type="checkbox"
                  id={id(`channel-${c}`)}
                  checked={draft.channels.includes(c)}
                  onChange={(e) =>
                    edit({
                      channels: e.currentTarget.checked
                        ? [...draft.channels, c]
                        : draft.channels.filter((x) => x !== c),
                    })}
                />
                <label for={id(`channel-${c}`)}>{CHANNEL_LABELS[c]}</label>
              </span>
            ))}
          </fieldset>
        </fieldset>

        {error && (
          <div class="error" role="alert" data-testid="bulk-error">
            <p>{error.message}</p>
            {error.fields.length > 0 && <ul>{error.fields.map((f) => <li key={f}>{f}</li>)}</ul>}
          </div>
        )}
        <div class="actions">
          <button type="submit" disabled={busy}>{busy ? "Sending…" : "Send"}</button>
        </div>
      </form>

      {sent.length > 0 && (
        <section aria-labelledby={id("sent")}>
          <h2 id={id("sent")} ref={sentHeading} tabIndex={-1}>Sent from this page</h2>
          <ul class="plain-list batches" data-testid="batches">
            {sent.map((s) => <BatchRow key={s.batch.id} sent={s} />)}
          </ul>
        </section>
      )}
    </section>
  );
}

function BatchRow({ sent }: { sent: Sent }) {
  const p = sent.progress;
  const status = p?.status ?? sent.batch.status;
  const recipients = p?.recipients ?? sent.batch.recipients;
  const created = p?.created ?? 0;
  return (
    <li class="batch card" data-batch-id={sent.batch.id} data-status={status}>
      <div class="card-head">
        <h3>{sent.title}</h3>
        <span role="status">
          <Pill tone={status === "done" ? "ok" : "wait"} testId="batch-status">
            {STATUS[status]}
          </Pill>
        </span>
      </div>
      <p class="small muted">
        To {sent.audience}: {recipients === 1 ? "1 recipient" : `${recipients} recipients`}
      </p>
      {recipients > 0 && (
        <p class="batch-progress">
          <progress max={recipients} value={created} aria-label="Written to inboxes" />{" "}
          <span data-testid="batch-created">{created}</span> of {recipients} in their inboxes
        </p>
      )}
      {p && (
        <p class="small" data-testid="batch-deliveries">
          Push: {p.pushSent} sent, {p.pushFailed} failed · E-mail: {p.emailSent} sent
        </p>
      )}
      {sent.error && <p class="error">{sent.error}</p>}
    </li>
  );
}
