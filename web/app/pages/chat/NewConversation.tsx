/**
 * Starting a conversation from the user directory (GET /api/users?search=): one person makes a
 * direct conversation (an existing one between the two is returned, not duplicated), several make
 * a group with a title.
 */
import { ApiError, client, data, describeError } from "../../lib/client.ts";
import { useEffect, useId, useState } from "preact/hooks";
import { Dialog } from "../../components/Dialog.tsx";
import { Avatar } from "../../components/Avatar.tsx";
import type { Conversation, Person } from "./types.ts";

export function NewConversationDialog(
  { open, onClose, onCreated }: {
    open: boolean;
    me: string;
    onClose: () => void;
    onCreated: (c: Conversation) => void;
  },
) {
  const searchId = useId();
  const titleId = useId();
  const [search, setSearch] = useState("");
  const [found, setFound] = useState<Person[] | null>(null);
  const [unavailable, setUnavailable] = useState(false);
  const [picked, setPicked] = useState<Person[]>([]);
  const [title, setTitle] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    if (!open) {
      setSearch("");
      setPicked([]);
      setTitle("");
      setError(null);
      return;
    }
    const abort = new AbortController();
    const timer = setTimeout(() => {
      client.GET("/api/users", {
        params: { query: { search: search.trim(), limit: 20 } },
        signal: abort.signal,
      }).then(data)
        .then((page) => {
          setFound(page.items);
          setUnavailable(false);
        })
        .catch((err) => {
          if (abort.signal.aborted) return;
          if (err instanceof ApiError && err.status === 404 && err.code === "not_found") {
            setUnavailable(true);
          } else setError(describeError(err));
        });
    }, 200);
    return () => {
      clearTimeout(timer);
      abort.abort();
    };
  }, [open, search]);

  const toggle = (p: Person) =>
    setPicked((list) =>
      list.some((x) => x.id === p.id) ? list.filter((x) => x.id !== p.id) : [...list, p]
    );

  async function create(e: Event) {
    e.preventDefault();
    if (!picked.length) return setError("Pick at least one person.");
    setBusy(true);
    setError(null);
    try {
      const group = picked.length > 1;
      const conversation = data(
        await client.POST("/api/conversations", {
          body: {
            type: group ? "group" : "direct",
            participantIds: picked.map((p) => p.id),
            ...(group && title.trim() ? { title: title.trim() } : {}),
          },
        }),
      );
      onCreated(conversation);
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <Dialog open={open} title="New conversation" onClose={onClose}>
      {unavailable
        ? (
          <p class="muted">
            The user directory is not available on this server yet (GET /api/users).
          </p>
        )
        : (
          <form onSubmit={create} class="new-conversation">
            <label for={searchId}>Find people by name</label>
            <input
              id={searchId}
              type="search"
              value={search}
              autocomplete="off"
              onInput={(e) => setSearch(e.currentTarget.value)}
            />
            {found === null
              ? <p class="muted" role="status">Loading people…</p>
              : (
                <fieldset class="people">
                  <legend class="visually-hidden">People</legend>
                  {found.length === 0 && <p class="muted">Nobody matches.</p>}
                  {found.map((p) => (
                    <label key={p.id} class="person">
                      <input
                        type="checkbox"
                        checked={picked.some((x) => x.id === p.id)}
                        onChange={() => toggle(p)}
                      />
                      <Avatar name={p.name} image={p.image} id={p.id} size={28} />
                      <span>{p.name}</span>
                      <span class="role-badge">{p.role}</span>
                    </label>
                  ))}
                </fieldset>
              )}
            {picked.length > 1 && (
              <>
                <label for={titleId}>Group title (optional)</label>
                <input
                  id={titleId}
                  value={title}
                  maxLength={200}
                  onInput={(e) => setTitle(e.currentTarget.value)}
                />
              </>
            )}
            {error && <p class="error" role="alert">{error}</p>}
            <div class="dialog-actions">
              <button type="button" class="secondary" onClick={onClose}>Cancel</button>
              <button type="submit" disabled={busy || !picked.length}>
                {picked.length > 1 ? "Start group" : "Start conversation"}
              </button>
            </div>
          </form>
        )}
    </Dialog>
  );
}
