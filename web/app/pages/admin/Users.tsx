/** Users: search and filters, counts by role, and role changes with a reason. */
import { useEffect, useId, useState } from "preact/hooks";
import { describeError } from "../../lib/api.ts";
import { fullTime } from "../../lib/format.ts";
import { type Role, ROLES, session } from "../../lib/session.ts";
import { useStore } from "../../lib/store.ts";
import { Dialog } from "../../components/Dialog.tsx";
import { adminApi, type AdminUser, type RoleChange } from "./api.ts";

export function UsersSection({ refresh }: { refresh: number }) {
  const me = useStore(session).user!;
  const searchId = useId();
  const roleId = useId();
  const statusId = useId();
  const [search, setSearch] = useState("");
  const [role, setRole] = useState("");
  const [status, setStatus] = useState("");
  const [items, setItems] = useState<AdminUser[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [counts, setCounts] = useState<{ byRole: Record<string, number>; total: number } | null>(
    null,
  );
  const [error, setError] = useState<string | null>(null);
  const [changing, setChanging] = useState<AdminUser | null>(null);
  const [lastChange, setLastChange] = useState<{ user: AdminUser; change: RoleChange } | null>(
    null,
  );

  const filters = { search: search.trim(), role, status, limit: 25 };

  useEffect(() => {
    const timer = setTimeout(() => {
      adminApi.users(filters).then((page) => {
        setItems(page.items);
        setCursor(page.nextCursor);
        setCounts(page.counts);
        setError(null);
      }).catch((err) => setError(describeError(err)));
    }, 200);
    return () => clearTimeout(timer);
  }, [search, role, status, refresh]);

  async function more() {
    try {
      const page = await adminApi.users({ ...filters, cursor });
      setItems((list) => [...(list ?? []), ...page.items]);
      setCursor(page.nextCursor);
    } catch (err) {
      setError(describeError(err));
    }
  }

  return (
    <section>
      <h1>Users</h1>
      <form class="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <div>
          <label for={searchId}>Search name or e-mail</label>
          <input
            id={searchId}
            type="search"
            value={search}
            onInput={(e) => setSearch(e.currentTarget.value)}
          />
        </div>
        <div>
          <label for={roleId}>Role</label>
          <select id={roleId} value={role} onChange={(e) => setRole(e.currentTarget.value)}>
            <option value="">Any</option>
            {ROLES.map((r) => <option key={r} value={r}>{r}</option>)}
          </select>
        </div>
        <div>
          <label for={statusId}>Status</label>
          <select id={statusId} value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
            <option value="">Any</option>
            <option value="active">active</option>
            <option value="suspended">suspended</option>
          </select>
        </div>
      </form>
      {counts && (
        <p class="counts" data-testid="user-counts">
          {counts.total} matching · {ROLES.map((r) => `${r} ${counts.byRole[r] ?? 0}`).join(" · ")}
        </p>
      )}
      {lastChange && (
        <p class="success" role="status">
          {lastChange.user.name} is now {lastChange.change.newRole} (was{" "}
          {lastChange.change.previousRole}). Reason recorded: “{lastChange.change.reason}”.
        </p>
      )}
      {error && <p class="error" role="alert">{error}</p>}
      {items === null
        ? <p class="muted" role="status">Loading users…</p>
        : (
          <div class="table-wrap" tabIndex={0} role="region" aria-label="Users table">
            <table data-testid="users-table">
              <caption class="visually-hidden">Users</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">E-mail</th>
                  <th scope="col">Role</th>
                  <th scope="col">Status</th>
                  <th scope="col">Joined</th>
                  <th scope="col">Last sign-in</th>
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {items.map((u) => (
                  <tr key={u.id} data-user-id={u.id}>
                    <td>{u.name}</td>
                    <td>{u.email}</td>
                    <td>
                      <span class="role-badge">{u.role}</span>
                    </td>
                    <td>{u.status}</td>
                    <td>{fullTime(u.createdAt)}</td>
                    <td>{fullTime(u.lastSignInAt)}</td>
                    <td>
                      {u.id !== me.id && (
                        <button
                          type="button"
                          class="secondary small"
                          aria-label={`Change role of ${u.name}`}
                          onClick={() => setChanging(u)}
                        >
                          Change role
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            {items.length === 0 && <p class="muted">No user matches.</p>}
          </div>
        )}
      {cursor && <button type="button" class="secondary" onClick={more}>Load more</button>}
      <RoleDialog
        user={changing}
        onClose={() => setChanging(null)}
        onChanged={(result) => {
          setChanging(null);
          setLastChange(result);
          setItems((list) => list?.map((u) => u.id === result.user.id ? result.user : u) ?? list);
        }}
      />
    </section>
  );
}

function RoleDialog(
  { user, onClose, onChanged }: {
    user: AdminUser | null;
    onClose: () => void;
    onChanged: (r: { user: AdminUser; change: RoleChange }) => void;
  },
) {
  const roleId = useId();
  const reasonId = useId();
  const [role, setRole] = useState<Role>("MEMBER");
  const [reason, setReason] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    if (user) {
      setRole(user.role);
      setReason("");
      setError(null);
    }
  }, [user?.id]);
  return (
    <Dialog open={user !== null} title={`Change role of ${user?.name ?? ""}`} onClose={onClose}>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          if (!user) {
            return;
          }
          if (!reason.trim()) {
            return setError("Give a reason: it is recorded with the change.");
          }
          setBusy(true);
          try {
            onChanged(await adminApi.changeRole(user.id, role, reason.trim()));
          } catch (err) {
            setError(describeError(err));
          } finally {
            setBusy(false);
          }
        }}
      >
        <p>
          Currently <strong>{user?.role}</strong>. The change applies on their next request.
        </p>
        <label for={roleId}>New role</label>
        <select
          id={roleId}
          value={role}
          onChange={(e) =>
            setRole(e.currentTarget.value as Role)}
        >
          {ROLES.map((r) => <option key={r} value={r}>{r}</option>)}
        </select>
        <label for={reasonId}>Reason (recorded)</label>
        <textarea
          id={reasonId}
          aria-required="true"
          maxLength={500}
          value={reason}
          onInput={(e) =>
            setReason(e.currentTarget.value)}
        />
        {error && <p class="error" role="alert">{error}</p>}
        <div class="dialog-actions">
          <button type="button" class="secondary" onClick={onClose}>Cancel</button>
          <button type="submit" disabled={busy || role === user?.role}>Change role</button>
        </div>
      </form>
    </Dialog>
  );
}
