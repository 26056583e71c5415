/**
 * Choosing people by name (ADMIN): a search of `GET /api/admin/users?search=` (name or e-mail, 200
 * ms after the last key), each match a button that adds them; the chosen ones listed, each
 * removable. Suspended accounts are shown as such (a bulk send skips them).
 */
import { useEffect, useId, useState } from "preact/hooks";
import { client, data, describeError, FRESH } from "../../lib/client.ts";

export interface Person {
  id: string;
  name: string;
  email: string | null;
}

export function PeoplePicker(
  { chosen, onChange }: { chosen: Person[]; onChange: (people: Person[]) => void },
) {
  const id = useId();
  const [search, setSearch] = useState("");
  const [matches, setMatches] = useState<(Person & { status: string })[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const text = search.trim();
    if (!text) {
      setMatches(null);
      return;
    }
    let current = true;
    const timer = setTimeout(async () => {
      try {
        const page = data(
          await client.GET("/api/admin/users", {
            params: { query: { search: text, limit: 10 } },
            ...FRESH,
          }),
        );
        if (current) {
          setMatches(page.items);
          setError(null);
        }
      } catch (err) {
        if (current) setError(describeError(err));
      }
    }, 200);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [search]);
  const add = (p: Person) => {
    if (!chosen.some((c) => c.id === p.id)) {
      onChange([...chosen, { id: p.id, name: p.name, email: p.email }]);
    }
  };
  return (
    <div class="people-picker">
      <label for={id}>Find a person by name or e-mail</label>
      <input
        id={id}
        type="search"
        value={search}
        autoComplete="off"
        onInput={(e) => setSearch(e.currentTarget.value)}
      />
      {error && <p class="error" role="alert">{error}</p>}
      {matches && (
        matches.length === 0
          ? <p class="muted small" role="status">Nobody matches.</p>
          : (
            <ul class="plain-list people-matches" aria-label="Matching people">
              {matches.map((m) => (
                <li key={m.id}>
                  <button
                    type="button"
                    class="secondary"
                    disabled={chosen.some((c) => c.id === m.id)}
                    onClick={() => add(m)}
                  >
                    Add {m.name}
                  </button>{" "}
                  <span class="muted small">
                    {m.email ?? ""}
                    {m.status === "suspended" ? " · suspended (receives nothing)" : ""}
                  </span>
                </li>
              ))}
            </ul>
          )
      )}
      <p class="small" role="status" data-testid="chosen-count">
        {chosen.length === 0
          ? "Nobody chosen yet."
          : chosen.length === 1
          ? "1 person chosen:"
          : `${chosen.length} people chosen:`}
      </p>
      {chosen.length > 0 && (
        <ul class="plain-list people-chosen" data-testid="chosen-people">
          {chosen.map((p) => (
            <li key={p.id}>
              {p.name} <span class="muted small">{p.email ?? ""}</span>{" "}
              <button
                type="button"
                class="link"
                aria-label={`Remove ${p.name}`}
                onClick={() => onChange(chosen.filter((c) => c.id !== p.id))}
              >
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
