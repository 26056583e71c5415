/**
 * Notification preferences: a table of types × channels (in the app, push, e-mail) showing the
 * effective values (the user's choices over the configured defaults), and quiet hours (start,
 * end, an IANA time zone from the browser's list, the browser's own zone preselected). Saving
 * sends only what changed (`PUT /api/notifications/preferences`, a partial document; a channel
 * left alone keeps following the default), and `quietHours: null` to clear them. The server
 * validates (unknown types, bad times, an empty period, a zone it does not know): its 400 is
 * shown next to the form, with the fields it names.
 *
 * Push goes to the devices the mobile apps registered; this web client does not register for
 * push (docs/web.md, "Notifications").
 */
import { useEffect, useId, useMemo, useState } from "preact/hooks";
import { ApiError, client, data, describeError, FRESH } from "../../lib/client.ts";
import { fullTime } from "../../lib/format.ts";
import { session } from "../../lib/session.ts";
import { useStore } from "../../lib/store.ts";
import {
  type Channel,
  CHANNEL_LABELS,
  CHANNELS,
  type NotificationType,
  type Preferences,
  type PreferencesPatch,
  type QuietHours,
  TYPE_LABELS,
  TYPES,
} from "./types.ts";

type Grid = Record<NotificationType, Record<Channel, boolean>>;

interface Quiet {
  on: boolean;
  start: string;
  end: string;
  timeZone: string;
}

const browserZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";

/** The zones the browser knows, with the saved one and the browser's own among them. */
function zoneList(extra: string[]): string[] {
  let zones: string[] = [];
  try {
    zones = Intl.supportedValuesOf("timeZone");
  } catch {
    // An older browser: the saved zone and its own are still offered.
  }
  return [...new Set([...zones, "UTC", ...extra.filter(Boolean)])].sort();
}

function quietOf(p: Preferences): Quiet {
  return p.quietHours
    ? { on: true, ...p.quietHours }
    : { on: false, start: "22:00", end: "07:00", timeZone: browserZone() };
}

function copyGrid(types: Preferences["types"]): Grid {
  return Object.fromEntries(TYPES.map((t) => [t, { ...types[t] }])) as unknown as Grid;
}

/** What the form changed against what was saved: the partial document to send, or null. */
function patchOf(saved: Preferences, grid: Grid, quiet: Quiet): PreferencesPatch | null {
  const patch: PreferencesPatch = {};
  const types: NonNullable<PreferencesPatch["types"]> = {};
  const before = saved.types as unknown as Grid;
  for (const t of TYPES) {
    for (const c of CHANNELS) {
      if (grid[t][c] !== before[t][c]) types[t] = { ...types[t], [c]: grid[t][c] };
    }
  }
  if (Object.keys(types).length) patch.types = types;
  const was = saved.quietHours;
  if (!quiet.on) {
    if (was) patch.quietHours = null;
  } else {
    const wanted: QuietHours = { start: quiet.start, end: quiet.end, timeZone: quiet.timeZone };
    if (
      !was || was.start !== wanted.start || was.end !== wanted.end ||
      was.timeZone !== wanted.timeZone
    ) patch.quietHours = wanted;
  }
  return Object.keys(patch).length ? patch : null;
}

export function PreferencesForm() {
  const user = useStore(session).user;
  const [saved, setSaved] = useState<Preferences | null>(null);
  const [grid, setGrid] = useState<Grid | null>(null);
  const [quiet, setQuiet] = useState<Quiet | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [error, setError] = useState<{ message: string; fields: FieldError[] } | null>(null);
  const [done, setDone] = useState("");
  const [busy, setBusy] = useState(false);
  const ids = { on: useId(), start: useId(), end: useId(), zone: useId(), error: useId() };

  const show = (p: Preferences) => {
    setSaved(p);
    setGrid(copyGrid(p.types));
    setQuiet(quietOf(p));
  };

  useEffect(() => {
    client.GET("/api/notifications/preferences", FRESH).then(data).then(
      show,
      (err) => setLoadError(describeError(err)),
    );
  }, []);

  const zones = useMemo(() => zoneList([browserZone(), saved?.quietHours?.timeZone ?? ""]), [
    saved?.quietHours?.timeZone,
  ]);

  if (!saved || !grid || !quiet) {
    return loadError
      ? <p class="error" role="alert">{loadError}</p>
      : <p class="muted" role="status">Loading…</p>;
  }
  const patch = patchOf(saved, grid, quiet);

  async function save(e: Event) {
    e.preventDefault();
    if (!patch) return;
    setBusy(true);
    setError(null);
    setDone("");
    try {
      show(data(await client.PUT("/api/notifications/preferences", { body: patch })));
      setDone("Saved.");
    } catch (err) {
      setError({
        message: describeError(err),
        fields: err instanceof ApiError && Array.isArray(err.details)
          ? err.details as FieldError[]
          : [],
      });
    } finally {
      setBusy(false);
    }
  }

  return (
    <form class="preferences" onSubmit={save} aria-describedby={error ? ids.error : undefined}>
      <h1>Notification preferences</h1>
      <p class="muted small" data-testid="preferences-updated">
        {saved.updatedAt
          ? `Last changed ${fullTime(saved.updatedAt)}.`
          : "You have not changed anything yet: these are the platform's defaults."}
      </p>
      <div class="table-wrap">
        <table class="preferences-grid" data-testid="preferences-grid">
          <caption>Where each kind of notification reaches you</caption>
          <thead>
            <tr>
              <th scope="col">Kind</th>
              {CHANNELS.map((c) => <th key={c} scope="col">{CHANNEL_LABELS[c]}</th>)}
            </tr>
          </thead>
          <tbody>
            {TYPES.map((t) => (
              <tr key={t}>
                <th scope="row">{TYPE_LABELS[t]}</th>
                {CHANNELS.map((c) => (
                  <td key={c}>
                    <label class="cell-check">
                      <input
                        type="checkbox"
                        checked={grid[t][c]}
                        data-type={t}
                        data-channel={c}
                        onChange={(e) =>
                          setGrid({ ...grid, [t]: { ...grid[t], [c]: e.currentTarget.checked } })}
                      />
                      <span class="visually-hidden">{CHANNEL_LABELS[c]}: {TYPE_LABELS[t]}</span>
                    </label>
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <ul class="small muted notes">
        <li>
          <strong>In the app</strong>: the inbox and the bell. Turned off, a kind is not kept in
          your inbox.
        </li>
        <li>
          <strong>Push</strong>: to the phones and tablets where you use the mobile apps. This web
          page does not receive push notifications.
        </li>
        <li>
          <strong>E-mail</strong>: {user?.email
            ? <>to {user.email}.</>
            : <>your account has no e-mail address, so nothing is mailed.</>}
        </li>
        <li>Critical notifications (your account's security) reach you whatever you choose.</li>
      </ul>

      <fieldset class="card quiet-hours">
        <legend>Quiet hours</legend>
        <p class="muted small">
          Push and e-mail wait until quiet hours end; notifications still arrive in the app at once.
          A period may cross midnight (22:00 to 07:00).
        </p>
        <div class="check">
          <input
            id={ids.on}
            type="checkbox"
            checked={quiet.on}
            onChange={(e) => setQuiet({ ...quiet, on: e.currentTarget.checked })}
          />
          <label for={ids.on}>Hold push and e-mail during quiet hours</label>
        </div>
        {quiet.on && (
          <div class="fields">
            <div>
              <label for={ids.start}>From</label>
              <input
                id={ids.start}
                type="time"
                step={60}
                required
                value={quiet.start}
                onInput={(e) => setQuiet({ ...quiet, start: e.currentTarget.value })}
              />
            </div>
            <div>
              <label for={ids.end}>Until</label>
              <input
                id={ids.end}
                type="time"
                step={60}
                required
                value={quiet.end}
                onInput={(e) => setQuiet({ ...quiet, end: e.currentTarget.value })}
              />
            </div>
            <div>
              <label for={ids.zone}>Time zone</label>
              <select
                id={ids.zone}
                value={quiet.timeZone}
                onChange={(e) => setQuiet({ ...quiet, timeZone: e.currentTarget.value })}
              >
                {zones.map((z) => <option key={z} value={z}>{z.replaceAll("_", " ")}</option>)}
              </select>
            </div>
          </div>
        )}
      </fieldset>

      {error && (
        <div class="error" role="alert" id={ids.error} data-testid="preferences-error">
          <p>{error.message}</p>
          {error.fields.length > 0 && (
            <ul>
              {error.fields.map((f) => <li key={f.path}>{f.path}: {f.message}</li>)}
            </ul>
          )}
        </div>
      )}
      <p class="success" role="status">{done}</p>
      <div class="actions">
        <button type="submit" disabled={busy || !patch}>Save preferences</button>
        <button
          type="button"
          class="secondary"
          disabled={busy || !patch}
          onClick={() => {
            show(saved);
            setError(null);
          }}
        >
          Discard changes
        </button>
      </div>
    </form>
  );
}

interface FieldError {
  path: string;
  message: string;
}
