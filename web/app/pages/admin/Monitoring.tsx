/**
 * Security events and the access log: newest first, filtered (type; the access log's type is the
 * class of the status, and it also filters by route, method and status; user, IP, time),
 * paged with the API's cursors. Filters are applied when the form is submitted.
 */
import type { ComponentChildren } from "preact";

type FieldType = "text" | "number" | "datetime-local";
import { useEffect, useId, useState } from "preact/hooks";
import { client, data, describeError, FRESH, type Query } from "../../lib/client.ts";
import { fullTime } from "../../lib/format.ts";
import { type AccessLogEntry, ADMIN_KEY, type SecurityEvent } from "./types.ts";
import { useQuery } from "../../lib/query.ts";
import { Link } from "../../lib/router.tsx";

type Filters = Record<string, string>;

/** The security event types the log holds, from the API (every stored type, alphabetically). */
function useSecurityTypes(): string[] {
  const types = useQuery({
    queryKey: [...ADMIN_KEY, "security-event-types"],
    queryFn: async () => data(await client.GET("/api/admin/security-events/types", FRESH)).types,
  });
  return types.data ?? [];
}

/** A detail's key as words: `previousRole` → "previous role", `ip_address` → "ip address". */
export function detailLabel(key: string): string {
  const words = key.replace(/[_.-]+/g, " ").replace(/([a-z0-9])([A-Z])/g, "$1 $2").toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** A detail's value as text: strings as they are, lists joined, anything nested as compact text. */
function detailValue(value: unknown): string {
  if (value === null || value === undefined) return "—";
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (Array.isArray(value) && value.every((v) => typeof v !== "object" || v === null)) {
    return value.map((v) => detailValue(v)).join(", ");
  }
  if (typeof value === "object") {
    return Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => `${detailLabel(k)}: ${detailValue(v)}`)
      .join("; ");
  }
  return String(value);
}

/** An event's details as a key/value list. */
export function Details({ details }: { details: Record<string, unknown> }) {
  const entries = Object.entries(details);
  if (!entries.length) return <span class="muted">—</span>;
  return (
    <dl class="details-list" data-testid="event-details">
      {entries.map(([k, v]) => (
        <div key={k}>
          <dt>{detailLabel(k)}</dt>
          <dd>{detailValue(v)}</dd>
        </div>
      ))}
    </dl>
  );
}

/** The user an event is about, by name, linked to the admin's users list searched for them. */
function EventUser({ event }: { event: SecurityEvent }) {
  const user = event.user;
  if (!user) return event.userId ? <span class="mono">{event.userId}</span> : <>—</>;
  if (user.name === null) {
    return (
      <span class="muted" title={user.id}>
        Deleted account
      </span>
    );
  }
  return (
    <Link
      href={`/admin/users?search=${encodeURIComponent(user.name)}`}
      title={user.id}
      data-testid="event-user"
    >
      {user.name}
    </Link>
  );
}

/** datetime-local value (local time) → ISO, or undefined. */
const iso = (local: string) => (local ? new Date(local).toISOString() : undefined);

function usePaged<T>(
  fetchPage: (filters: Record<string, string | undefined>) => Promise<
    { items: T[]; nextCursor: string | null }
  >,
  filters: Filters,
  refresh: number,
) {
  const [items, setItems] = useState<T[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const params = () => ({
    ...filters,
    from: iso(filters.from),
    to: iso(filters.to),
    limit: "50",
  });
  useEffect(() => {
    setItems(null);
    fetchPage(params()).then((page) => {
      setItems(page.items);
      setCursor(page.nextCursor);
      setError(null);
    }).catch((err) => {
      setItems([]);
      setError(describeError(err));
    });
  }, [JSON.stringify(filters), refresh]);
  const more = async () => {
    try {
      const page = await fetchPage({ ...params(), cursor: cursor ?? undefined });
      setItems((list) => [...(list ?? []), ...page.items]);
      setCursor(page.nextCursor);
    } catch (err) {
      setError(describeError(err));
    }
  };
  return { items, cursor, error, more };
}

function FilterForm(
  { fields, onApply, children }: {
    /** `list`: the values of a select, or `[value, label]` pairs. */
    fields: {
      name: string;
      label: string;
      type?: FieldType;
      list?: readonly (string | readonly [string, string])[];
    }[];
    onApply: (filters: Filters) => void;
    children?: ComponentChildren;
  },
) {
  const base = useId();
  const [values, setValues] = useState<Filters>({});
  return (
    <form
      class="filters"
      role="search"
      onSubmit={(e) => {
        e.preventDefault();
        onApply(Object.fromEntries(Object.entries(values).filter(([, v]) => v.trim())));
      }}
    >
      {fields.map((f) => (
        <div key={f.name}>
          <label for={`${base}-${f.name}`}>{f.label}</label>
          {f.list
            ? (
              <select
                id={`${base}-${f.name}`}
                value={values[f.name] ?? ""}
                onChange={(e) => setValues({ ...values, [f.name]: e.currentTarget.value })}
              >
                <option value="">Any</option>
                {f.list.map((item) => {
                  const [v, text] = typeof item === "string" ? [item, item] : item;
                  return <option key={v} value={v}>{text}</option>;
                })}
              </select>
            )
            : (
              <FilterInput
                id={`${base}-${f.name}`}
                type={f.type ?? "text"}
                value={values[f.name] ?? ""}
                onValue={(v) => setValues({ ...values, [f.name]: v })}
              />
            )}
        </div>
      ))}
      {children}
      <div class="filter-actions">
        <button type="submit">Apply filters</button>
        <button
          type="reset"
          class="secondary"
          onClick={() => {
            setValues({});
            onApply({});
          }}
        >
          Clear
        </button>
      </div>
    </form>
  );
}

function FilterInput(
  { id, type, value, onValue }: {
    id: string;
    type: FieldType;
    value: string;
    onValue: (v: string) => void;
  },
) {
  const props = { id, value, onInput: (e: Event) => onValue((e.target as HTMLInputElement).value) };
  if (type === "number") return <input type="number" {...props} />;
  if (type === "datetime-local") return <input type="datetime-local" {...props} />;
  return <input type="text" {...props} />;
}

/** The access log's types: the class of the status (the API's `type` filter). */
const ACCESS_TYPES = [
  ["success", "Success (2xx)"],
  ["redirect", "Redirect (3xx)"],
  ["client_error", "Client error (4xx)"],
  ["server_error", "Server error (5xx)"],
] as const;

const COMMON: { name: string; label: string; type?: FieldType }[] = [
  { name: "userId", label: "User id" },
  { name: "ip", label: "IP address" },
  { name: "from", label: "From", type: "datetime-local" },
  { name: "to", label: "Until", type: "datetime-local" },
];

export function SecuritySection({ refresh }: { refresh: number }) {
  const [filters, setFilters] = useState<Filters>({});
  const types = useSecurityTypes();
  const { items, cursor, error, more } = usePaged<SecurityEvent>(
    async (filters) =>
      data(
        await client.GET("/api/admin/security-events", {
          params: { query: filters as Query<"/api/admin/security-events", "get"> },
          ...FRESH,
        }),
      ),
    filters,
    refresh,
  );
  return (
    <section>
      <h1>Security events</h1>
      <FilterForm
        fields={[
          { name: "type", label: "Type", list: types },
          { name: "severity", label: "Severity", list: ["info", "warning", "critical"] },
          ...COMMON,
        ]}
        onApply={setFilters}
      />
      {error && <p class="error" role="alert">{error}</p>}
      {items === null
        ? <p role="status">Loading…</p>
        : (
          <div class="table-wrap" tabIndex={0} role="region" aria-label="Security events table">
            <table data-testid="security-table">
              <caption class="visually-hidden">Security events, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">Type</th>
                  <th scope="col">Severity</th>
                  <th scope="col">User</th>
                  <th scope="col">IP</th>
                  <th scope="col">Details</th>
                </tr>
              </thead>
              <tbody>
                {items.map((e) => (
                  <tr key={e.id}>
                    <td>{fullTime(e.createdAt)}</td>
                    <td>
                      <code>{e.type}</code>
                    </td>
                    <td>
                      <span class={`severity ${e.severity}`}>{e.severity}</span>
                    </td>
                    <td>
                      <EventUser event={e} />
                    </td>
                    <td>{e.ip ?? "—"}</td>
                    <td class="details">
                      <Details details={e.details} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            {items.length === 0 && <p class="muted">No event matches.</p>}
          </div>
        )}
      {cursor && <button type="button" class="secondary" onClick={more}>Load more</button>}
    </section>
  );
}

export function AccessLogSection({ refresh }: { refresh: number }) {
  const [filters, setFilters] = useState<Filters>({});
  const { items, cursor, error, more } = usePaged<AccessLogEntry>(
    async (filters) =>
      data(
        await client.GET("/api/admin/access-logs", {
          params: { query: filters as Query<"/api/admin/access-logs", "get"> },
          ...FRESH,
        }),
      ),
    filters,
    refresh,
  );
  return (
    <section>
      <h1>Access log</h1>
      <FilterForm
        fields={[
          { name: "type", label: "Type", list: ACCESS_TYPES },
          { name: "route", label: "Route (e.g. /api/conversations)" },
          { name: "method", label: "Method", list: ["GET", "POST", "PUT", "PATCH", "DELETE"] },
          { name: "status", label: "Status", type: "number" },
          ...COMMON,
        ]}
        onApply={setFilters}
      />
      {error && <p class="error" role="alert">{error}</p>}
      {items === null
        ? <p role="status">Loading…</p>
        : (
          <div class="table-wrap" tabIndex={0} role="region" aria-label="Access log table">
            <table data-testid="access-table">
              <caption class="visually-hidden">Access log, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">Method</th>
                  <th scope="col">Route</th>
                  <th scope="col">Status</th>
                  <th scope="col">ms</th>
                  <th scope="col">User</th>
                  <th scope="col">IP</th>
                </tr>
              </thead>
              <tbody>
                {items.map((e) => (
                  <tr key={e.id}>
                    <td>{fullTime(e.createdAt)}</td>
                    <td>{e.method}</td>
                    <td>
                      <code>{e.route}</code>
                    </td>
                    <td>
                      <span
                        class={e.status >= 500
                          ? "status bad"
                          : e.status >= 400
                          ? "status warn"
                          : "status"}
                      >
                        {e.status}
                      </span>
                    </td>
                    <td>{e.durationMs}</td>
                    <td class="mono">{e.userId ?? "—"}</td>
                    <td>{e.ip ?? "—"}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            {items.length === 0 && <p class="muted">No entry matches.</p>}
          </div>
        )}
      {cursor && <button type="button" class="secondary" onClick={more}>Load more</button>}
    </section>
  );
}
