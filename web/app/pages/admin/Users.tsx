/**
 * Users: search and filters, counts by role, role changes with a reason, suspension and
 * reactivation with a reason (a suspension ends every session of the user at once: their page is
 * signed out on its next request), and ending every session of a user.
 */
import { useEffect, useId, useState } from "preact/hooks";
import { useFormReset } from "../../lib/form-reset.ts";
import { client, data, describeError, FRESH, type Query } from "../../lib/client.ts";
import { fullTime } from "../../lib/format.ts";
import { type Role, ROLES, session } from "../../lib/session.ts";
import { useStore } from "../../lib/store.ts";
import { Dialog } from "../../components/Dialog.tsx";
import { ADMIN_KEY, type AdminUser, type RoleChange } from "./types.ts";
import { queryClient, updatePages, useInfiniteQuery } from "../../lib/query.ts";

const changeStatus = async (id: string, status: "active" | "suspended", reason: string) =>
  data(
    await client.PUT("/api/admin/users/{id}/status", {
      params: { path: { id } },
      body: { status, reason },
    }),
  );
import { Pill } from "../../components/Pill.tsx";

const USERS_KEY = [...ADMIN_KEY, "users"] as const;

/** A user the admin just changed, shown so in every cached list (the API's answer). */
function showChanged(user: AdminUser): void {
  updatePages<{ items: AdminUser[] }>(USERS_KEY, (page) => ({
    ...page,
    items: page.items.map((u) => u.id === user.id ? user : u),
  }));
}

export function UsersSection({ refresh }: { refresh: number }) {
  const me = useStore(session).user!;
  const searchId = useId();
  const roleId = useId();
  const statusId = useId();
  // `?search=` opens the list searched (a security event links its user so).
  const [search, setSearch] = useState(
    () => new URLSearchParams(location.search).get("search") ?? "",
  );
  const [role, setRole] = useState("");
  const [status, setStatus] = useState("");
  const [moreError, setError] = useState<string | null>(null);
  const [changing, setChanging] = useState<AdminUser | null>(null);
  const [lastChange, setLastChange] = useState<{ user: AdminUser; change: RoleChange } | null>(
    null,
  );
  const [acting, setActing] = useState<{ user: AdminUser; action: UserAction } | null>(null);
  const [notice, setNotice] = useState<string | null>(null);

  // The search is sent 200 ms after the last key; the role and status at once.
  const [searching, setSearching] = useState(search.trim());
  useEffect(() => {
    const timer = setTimeout(() => setSearching(search.trim()), 200);
    return () => clearTimeout(timer);
  }, [search]);
  const filters = { search: searching, role, status, limit: 25 };
  const users = useInfiniteQuery({
    queryKey: [...USERS_KEY, filters],
    queryFn: async ({ pageParam }) =>
      data(
        await client.GET("/api/admin/users", {
          params: {
            query: { ...filters, ...(pageParam ? { cursor: pageParam } : {}) } as Query<
              "/api/admin/users",
              "get"
            >,
          },
          ...FRESH,
        }),
      ),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.nextCursor,
    // Keeps the table while another filter's list is read.
    placeholderData: (previous) => previous,
  });
  // The section's `refresh` (an admin event) reads the lists again, as AdminPage's invalidation.
  useEffect(() => {
    if (refresh) void queryClient.invalidateQueries({ queryKey: USERS_KEY });
  }, [refresh]);
  const items: AdminUser[] | null = users.data?.pages.flatMap((page) => page.items) ?? null;
  const counts = users.data?.pages[0]?.counts ?? null;
  const error = moreError ?? (users.error ? describeError(users.error) : null);

  async function more() {
    setError(null);
    const next = await users.fetchNextPage();
    if (next.error) setError(describeError(next.error));
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
      {notice && <p class="success" role="status">{notice}</p>}
      {error && <p class="error" role="alert">{error}</p>}
      {items === null
        ? <p class="muted" role="status">Loading users…</p>
        : (
          <div class="table-wrap" tabIndex={0} role="region" aria-label="Users table">
            <table data-testid="users-table" class="stacked-table">
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
                    <td data-label="Name">{u.name}</td>
                    <td data-label="E-mail">{u.email}</td>
                    <td data-label="Role">
                      <span class="role-badge">{u.role}</span>
                    </td>
                    <td data-label="Status">
                      <Pill tone={u.status === "active" ? "ok" : "bad"} testId="user-status">
                        {u.status}
                      </Pill>
                    </td>
                    <td data-label="Joined">{fullTime(u.createdAt)}</td>
                    <td data-label="Last sign-in">{fullTime(u.lastSignInAt)}</td>
                    <td class="actions-cell">
                      {u.id !== me.id && (
                        <div class="row-actions">
                          <button
                            type="button"
                            class="secondary small"
                            aria-label={`Change role of ${u.name}`}
                            onClick={() => setChanging(u)}
                          >
                            Change role
                          </button>
                          <button
                            type="button"
                            class="secondary small"
                            aria-label={`${
                              u.status === "active" ? "Suspend" : "Reactivate"
                            } ${u.name}`}
                            onClick={() =>
                              setActing({
                                user: u,
                                action: u.status === "active" ? "suspend" : "reactivate",
                              })}
                          >
                            {u.status === "active" ? "Suspend" : "Reactivate"}
                          </button>
                          <button
                            type="button"
                            class="secondary small"
                            aria-label={`End sessions of ${u.name}`}
                            onClick={() => setActing({ user: u, action: "signout" })}
                          >
                            End sessions
                          </button>
                        </div>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            {items.length === 0 && <p class="muted">No user matches.</p>}
          </div>
        )}
      {users.hasNextPage && (
        <button
          type="button"
          class="secondary"
          disabled={users.isFetchingNextPage}
          onClick={more}
        >
          Load more
        </button>
      )}
      <UserActionDialog
        acting={acting}
        onClose={() => setActing(null)}
        onDone={(user, text) => {
          setActing(null);
          setNotice(text);
          setLastChange(null);
          if (user) showChanged(user);
        }}
      />
      <RoleDialog
        user={changing}
        onClose={() => setChanging(null)}
        onChanged={(result) => {
          setChanging(null);
          setNotice(null);
          setLastChange(result);
          showChanged(result.user);
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
  useFormReset(() => {
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
            onChanged(
              data(
                await client.PUT("/api/admin/users/{id}/role", {
                  params: { path: { id: user.id } },
                  body: { role, reason: reason.trim() },
                }),
              ),
            );
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

type UserAction = "suspend" | "reactivate" | "signout";

const ACTION_TEXT: Record<UserAction, { title: string; button: string; explain: string }> = {
  suspend: {
    title: "Suspend",
    button: "Suspend",
    explain:
      "They are signed out everywhere at once and cannot sign in until reactivated. Their page is signed out on its next action.",
  },
  reactivate: {
    title: "Reactivate",
    button: "Reactivate",
    explain: "They may sign in again.",
  },
  signout: {
    title: "End all sessions of",
    button: "End all sessions",
    explain: "Every device they are signed in on is signed out now; they may sign in again.",
  },
};

function UserActionDialog(
  { acting, onClose, onDone }: {
    acting: { user: AdminUser; action: UserAction } | null;
    onClose: () => void;
    onDone: (user: AdminUser | null, notice: string) => void;
  },
) {
  const reasonId = useId();
  const [reason, setReason] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useFormReset(() => {
    setReason("");
    setError(null);
  }, [acting?.user.id, acting?.action]);
  const text = acting ? ACTION_TEXT[acting.action] : null;
  const needsReason = acting?.action !== "signout";
  return (
    <Dialog
      open={acting !== null}
      title={acting ? `${text!.title} ${acting.user.name}` : ""}
      onClose={onClose}
    >
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          if (!acting) return;
          if (needsReason && !reason.trim()) {
            return setError("Give a reason: it is recorded with the change.");
          }
          setBusy(true);
          try {
            if (acting.action === "signout") {
              const { revoked } = data(
                await client.POST("/api/admin/users/{id}/signout", {
                  params: { path: { id: acting.user.id } },
                }),
              );
              onDone(
                null,
                `${acting.user.name}: ${revoked} session${revoked === 1 ? "" : "s"} ended.`,
              );
            } else {
              const { user, change } = await changeStatus(
                acting.user.id,
                acting.action === "suspend" ? "suspended" : "active",
                reason.trim(),
              );
              onDone(
                user,
                `${user.name} is now ${change.newStatus}` +
                  (change.sessionsRevoked ? ` (${change.sessionsRevoked} sessions ended)` : "") +
                  `. Reason recorded: “${change.reason}”.`,
              );
            }
          } catch (err) {
            setError(describeError(err));
          } finally {
            setBusy(false);
          }
        }}
      >
        <p>{text?.explain}</p>
        {needsReason && (
          <>
            <label for={reasonId}>Reason (recorded)</label>
            <textarea
              id={reasonId}
              aria-required="true"
              maxLength={500}
              value={reason}
              onInput={(e) => {
                setReason(e.currentTarget.value);
                setError(null);
              }}
            />
          </>
        )}
        {error && <p class="error" role="alert">{error}</p>}
        <div class="dialog-actions">
          <button type="button" class="secondary" onClick={onClose}>Cancel</button>
          <button
            type="submit"
            class={acting?.action === "reactivate" ? "" : "danger"}
            disabled={busy}
          >
            {text?.button}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
