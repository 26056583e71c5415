/**
 * A person's public profile (GET /api/users/:id): name, picture, bio and role, with what one can
 * do about them: write to them (a direct conversation), block or unblock them, report them. A
 * block is never shown to the person blocked (the API tells them nothing); here it is the
 * blocker's own state.
 */
import { useEffect, useState } from "preact/hooks";
import { Link, navigate } from "../../lib/router.tsx";
import { session } from "../../lib/session.ts";
import { useStore } from "../../lib/store.ts";
import { blockedIds, loadBlocked, setBlocked } from "../../lib/blocks.ts";
import type { PageProps } from "../../lib/page.ts";
import { Avatar } from "../../components/Avatar.tsx";
import { BlockDialog } from "../../components/BlockDialog.tsx";
import { ReportDialog } from "../../components/ReportDialog.tsx";
import { client, data, describeError, FRESH } from "../../lib/client.ts";
import { useQuery } from "../../lib/query.ts";

export function PersonPage({ params }: PageProps) {
  const me = useStore(session).user!;
  const blocked = useStore(blockedIds);
  const profile = useQuery({
    queryKey: ["users", params.userId],
    queryFn: async () =>
      data(
        await client.GET("/api/users/{id}", {
          params: { path: { id: params.userId } },
          ...FRESH,
        }),
      ),
  });
  const person = profile.data ?? null;
  const error = profile.error ? describeError(profile.error) : null;
  const [notice, setNotice] = useState<string | null>(null);
  const [confirming, setConfirming] = useState(false);
  const [reporting, setReporting] = useState(false);
  const [busy, setBusy] = useState(false);
  const id = params.userId;

  useEffect(() => {
    void loadBlocked().catch(() => {});
  }, [id]);

  if (error) {
    return (
      <section class="person-page">
        <p class="error" role="alert">{error}</p>
        <Link href="/chat">Back to the conversations</Link>
      </section>
    );
  }
  if (!person) return <p class="muted" role="status">Loading…</p>;
  const isBlocked = blocked?.has(person.id) ?? false;
  const self = person.id === me.id;

  async function change(block: boolean) {
    setBusy(true);
    setNotice(null);
    try {
      await setBlocked(person!.id, block);
      setNotice(block ? `You blocked ${person!.name}.` : `You unblocked ${person!.name}.`);
    } catch (err) {
      setNotice(describeError(err));
    } finally {
      setBusy(false);
      setConfirming(false);
    }
  }

  async function write() {
    try {
      const c = data(
        await client.POST("/api/conversations", {
          body: { type: "direct", participantIds: [person!.id] },
        }),
      );
      navigate(`/chat/${c.id}`);
    } catch (err) {
      setNotice(describeError(err));
    }
  }

  return (
    <section class="person-page" aria-labelledby="person-name">
      <header class="person-head">
        <Avatar name={person.name} image={person.image} id={person.id} size={72} />
        <div>
          <h1 id="person-name">{person.name}</h1>
          <p class="muted">{person.role.toLowerCase()}</p>
        </div>
      </header>
      {person.bio && <p class="bio">{person.bio}</p>}
      {isBlocked && (
        <p class="blocked-note" data-testid="blocked-note">
          You block {person.name}: they cannot message you directly or add you to groups.
        </p>
      )}
      {!self && (
        <div class="person-actions">
          <button type="button" onClick={() => void write()}>Message</button>
          {isBlocked
            ? (
              <button
                type="button"
                class="secondary"
                disabled={busy}
                onClick={() => void change(false)}
              >
                Unblock
              </button>
            )
            : (
              <button
                type="button"
                class="secondary"
                disabled={busy}
                onClick={() => setConfirming(true)}
              >
                Block
              </button>
            )}
          <button type="button" class="secondary" onClick={() => setReporting(true)}>
            Report
          </button>
        </div>
      )}
      {notice && <p role="status" class="notice">{notice}</p>}
      <BlockDialog
        name={confirming ? person.name : null}
        onCancel={() => setConfirming(false)}
        onConfirm={() => void change(true)}
      />
      <ReportDialog
        subject={reporting ? { type: "user", id: person.id } : null}
        what={person.name}
        onClose={(sent) => {
          setReporting(false);
          if (sent) setNotice(`Thank you: ${person.name} was reported to the moderators.`);
        }}
      />
    </section>
  );
}

/** The people one blocks, each with Unblock (on the profile page). */
export function BlockedPeople() {
  const blocked = useStore(blockedIds);
  const list = useQuery({
    queryKey: ["users", "blocked"],
    queryFn: async () =>
      data(await client.GET("/api/users/blocked", { params: { query: { limit: 200 } }, ...FRESH })),
  });
  const people = list.data?.items ?? [];
  const [failed, setError] = useState<string | null>(null);
  const error = failed ?? (list.error ? describeError(list.error) : null);
  useEffect(() => {
    void loadBlocked().catch(() => {});
  }, []);
  const shown = people.filter((p) => blocked === null || blocked.has(p.id));
  return (
    <section class="blocked-people" aria-labelledby="blocked-heading">
      <h2 id="blocked-heading">Blocked people</h2>
      {error && <p class="error" role="alert">{error}</p>}
      {shown.length === 0 ? <p class="muted">You block nobody.</p> : (
        <ul class="blocked-list">
          {shown.map((p) => (
            <li key={p.id}>
              <Avatar name={p.name} image={p.image} id={p.id} size={28} />
              <Link href={`/people/${p.id}`}>{p.name}</Link>
              <button
                type="button"
                class="link"
                aria-label={`Unblock ${p.name}`}
                onClick={() =>
                  void setBlocked(p.id, false).catch((err) => setError(describeError(err)))}
              >
                Unblock
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
