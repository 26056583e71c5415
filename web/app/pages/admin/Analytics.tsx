/**
 * Analytics (GET /api/admin/analytics) as charts: users, activity and messaging over a range, the
 * users by role and status; notifications created and read over time (its `notifications`
 * section: the figures of GET /api/notifications/analytics), their read rate and time to read.
 * Series of other domains (store, wallet: any `[{ t, value }]` the API adds to their sections)
 * are drawn as they appear. Read again every minute and on `admin` events.
 */
import { useEffect, useId, useState } from "preact/hooks";
import { client, data as answer, describeError, type Query } from "../../lib/client.ts";
import type { Analytics, NotificationFigures, Point } from "./types.ts";
import { CountBars, moneyFormat, SeriesChart } from "./Charts.tsx";

const RANGES = [
  { days: 7, label: "Last 7 days" },
  { days: 30, label: "Last 30 days" },
  { days: 90, label: "Last 90 days" },
  { days: 365, label: "Last year" },
];

const isSeries = (v: unknown): v is Point[] =>
  Array.isArray(v) && v.every((p) => p && typeof p.t === "string" && typeof p.value === "number");

const KNOWN = new Set(["range", "users", "activity", "messaging", "notifications"]);

/** Titles of the other domains' series the page knows; `money`: minor units of the currency. */
const SERIES_TITLES: Record<string, { title: string; money?: boolean }> = {
  "store.sales": { title: "Sales", money: true },
  "store.orders": { title: "Orders placed" },
  "wallet.walletsCreated": { title: "Wallets created" },
};

/** The currency a domain's section states (`store.currency`), if any. */
function currencyOf(data: Analytics, domain: string): string | null {
  const section = (data as unknown as Record<string, { currency?: unknown }>)[domain];
  return typeof section?.currency === "string" ? section.currency : null;
}

export function AnalyticsSection({ refresh }: { refresh: number }) {
  const rangeId = useId();
  const intervalId = useId();
  const [days, setDays] = useState(30);
  const [interval, setInterval_] = useState<"day" | "week" | "month">("day");
  const [data, setData] = useState<Analytics | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [tick, setTick] = useState(0);

  useEffect(() => {
    const every = setInterval(() => setTick((n) => n + 1), 60_000);
    return () => clearInterval(every);
  }, []);

  useEffect(() => {
    const to = new Date();
    const from = new Date(to.getTime() - days * 86_400_000);
    client.GET("/api/admin/analytics", {
      params: {
        query: { from: from.toISOString(), to: to.toISOString(), interval } as Query<
          "/api/admin/analytics",
          "get"
        >,
      },
    }).then(answer)
      .then((d) => {
        setData(d);
        setError(null);
      })
      .catch((err) => setError(describeError(err)));
  }, [days, interval, refresh, tick]);

  const extra = data
    ? Object.entries(data).filter(([k]) => !KNOWN.has(k)).flatMap(([domain, value]) =>
      Object.entries((value ?? {}) as Record<string, unknown>)
        .filter(([, v]) => isSeries(v))
        .map(([key, v]) => ({ domain, key, series: v as Point[] }))
    )
    : [];

  return (
    <section class="analytics">
      <h1>Analytics</h1>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <div>
          <label for={rangeId}>Range</label>
          <select
            id={rangeId}
            value={days}
            onChange={(e) => setDays(Number(e.currentTarget.value))}
          >
            {RANGES.map((r) => <option key={r.days} value={r.days}>{r.label}</option>)}
          </select>
        </div>
        <div>
          <label for={intervalId}>Interval</label>
          <select
            id={intervalId}
            value={interval}
            onChange={(e) => setInterval_(e.currentTarget.value as typeof interval)}
          >
            <option value="day">Day</option>
            <option value="week">Week</option>
            <option value="month">Month</option>
          </select>
        </div>
        <button type="button" class="secondary" onClick={() => setTick((n) => n + 1)}>
          Refresh
        </button>
      </form>
      {error && <p class="error" role="alert">{error}</p>}
      {!data ? <p role="status">Loading…</p> : (
        <>
          <dl class="tiles">
            <div>
              <dt>Users (all time)</dt>
              <dd data-testid="tile-users">{data.users.total}</dd>
            </div>
            <div>
              <dt>Conversations (all time)</dt>
              <dd data-testid="tile-conversations">{data.messaging.totals.conversations}</dd>
            </div>
            <div>
              <dt>Messages kept (all time)</dt>
              <dd data-testid="tile-messages">{data.messaging.totals.messages}</dd>
            </div>
          </dl>
          <div class="charts">
            <SeriesChart
              id="messages"
              title="Messages sent"
              series={data.messaging.messages}
              interval={interval}
            />
            <SeriesChart
              id="active-senders"
              title="Active senders"
              series={data.messaging.activeSenders}
              interval={interval}
            />
            <SeriesChart
              id="conversations-created"
              title="New conversations"
              series={data.messaging.conversationsCreated}
              interval={interval}
            />
            <SeriesChart
              id="active-users"
              title="Active users"
              series={data.activity.activeUsers}
              interval={interval}
            />
            <SeriesChart
              id="sign-ins"
              title="Sign-ins"
              series={data.activity.signIns}
              interval={interval}
            />
            <SeriesChart
              id="signups"
              title="New users"
              series={data.users.signups}
              interval={interval}
            />
            <CountBars id="users-by-role" title="Users by role" counts={data.users.byRole} />
            <CountBars id="users-by-status" title="Users by status" counts={data.users.byStatus} />
            {extra.map((s) => {
              const known = SERIES_TITLES[`${s.domain}.${s.key}`];
              const money = known?.money && currencyOf(data, s.domain);
              const formats = money ? moneyFormat(money) : null;
              return (
                <SeriesChart
                  key={`${s.domain}.${s.key}`}
                  id={`${s.domain}-${s.key}`}
                  title={known
                    ? `${known.title}${money ? ` (${money})` : ""}`
                    : `${s.domain}: ${s.key}`}
                  series={s.series}
                  interval={interval}
                  {...(formats ? { format: formats.text, tickFormat: formats.tick } : {})}
                />
              );
            })}
          </div>
          {data.notifications && <Notifications figures={data.notifications} interval={interval} />}
        </>
      )}
    </section>
  );
}

/** A duration in seconds, in the largest unit that keeps it readable. */
function duration(seconds: number): string {
  if (seconds < 90) return `${Math.round(seconds)} s`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min`;
  if (seconds < 172_800) return `${Math.round(seconds / 3600)} h`;
  return `${Math.round(seconds / 86_400)} days`;
}

function Notifications({ figures, interval }: { figures: NotificationFigures; interval: string }) {
  const series = (key: "created" | "read"): Point[] =>
    figures.series.map((p) => ({ t: p.t, value: p[key] }));
  return (
    <section aria-labelledby="analytics-notifications" class="analytics-part">
      <h2 id="analytics-notifications">Notifications</h2>
      <dl class="tiles">
        <div>
          <dt>Created (range)</dt>
          <dd data-testid="tile-notifications-created">{figures.totals.created}</dd>
        </div>
        <div>
          <dt>Read since</dt>
          <dd data-testid="tile-notifications-read">{figures.totals.read}</dd>
        </div>
        <div>
          <dt>Read rate</dt>
          <dd data-testid="tile-notifications-read-rate">
            {Math.round(figures.readRate * 100)} %
          </dd>
        </div>
        <div>
          <dt>Median time to read</dt>
          <dd
            data-testid="tile-notifications-median"
            title="Estimated from a histogram of read times: within 1 s + 9 % of the exact median"
          >
            {figures.medianSecondsToRead === null
              ? "—"
              : `≈ ${duration(figures.medianSecondsToRead)}`}
          </dd>
        </div>
        <div>
          <dt>Push sent / failed</dt>
          <dd>{figures.totals.pushSent} / {figures.totals.pushFailed}</dd>
        </div>
        <div>
          <dt>E-mails sent</dt>
          <dd>{figures.totals.emailSent}</dd>
        </div>
      </dl>
      <div class="charts">
        <SeriesChart
          id="notifications-created"
          title="Notifications created"
          series={series("created")}
          interval={interval}
        />
        <SeriesChart
          id="notifications-read"
          title="Notifications read (of those created)"
          series={series("read")}
          interval={interval}
        />
        <CountBars
          id="notifications-by-type"
          title="Notifications by type"
          counts={Object.fromEntries(figures.byType.map((t) => [t.type, t.created]))}
        />
      </div>
    </section>
  );
}
