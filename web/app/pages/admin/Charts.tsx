/**
 * Small SVG charts of our own: a column chart of a time series and horizontal bars of counts.
 * Each is an image with a text alternative (what it shows, its total and peak), and its data as
 * a table under a disclosure, for screen readers and for anyone who wants the numbers.
 */
import { useId } from "preact/hooks";
import type { Point } from "./types.ts";

const W = 320;
const H = 120;
const PAD = { top: 8, right: 4, bottom: 18, left: 28 };

function niceMax(n: number): number {
  if (n <= 4) return Math.max(1, n);
  const magnitude = 10 ** Math.floor(Math.log10(n));
  for (const step of [1, 2, 2.5, 5, 10]) if (step * magnitude >= n) return step * magnitude;
  return n;
}

const dateFormat = (interval: string) =>
  new Intl.DateTimeFormat(
    undefined,
    interval === "month"
      ? { month: "short", year: "numeric", timeZone: "UTC" }
      : { month: "short", day: "numeric", timeZone: "UTC" },
  );

/** Whole numbers as the reader's locale writes them; large ones short on an axis (1.2M). */
const plain = (n: number) => n.toLocaleString();
const compact = (n: number) =>
  new Intl.NumberFormat(undefined, { notation: "compact", maximumFractionDigits: 1 }).format(n);

/**
 * Amounts kept in minor units (cents) as money in `currency`: the currency's own number of
 * decimals, as Intl knows it.
 */
export function moneyFormat(
  currency: string,
): { text: (n: number) => string; tick: (n: number) => string } {
  try {
    const full = new Intl.NumberFormat(undefined, { style: "currency", currency });
    const digits = full.resolvedOptions().maximumFractionDigits ?? 2;
    const short = new Intl.NumberFormat(undefined, {
      style: "currency",
      currency,
      notation: "compact",
      maximumFractionDigits: 1,
    });
    return {
      text: (n) => full.format(n / 10 ** digits),
      tick: (n) => short.format(n / 10 ** digits),
    };
  } catch {
    // An unknown code: the amounts as they are.
    return { text: plain, tick: compact };
  }
}

export function SeriesChart(
  { id, title, series, interval, unit = "", format = plain, tickFormat = compact }: {
    id: string;
    title: string;
    series: Point[];
    interval: string;
    unit?: string;
    /** How a value reads in the total, the summary and the table. */
    format?: (n: number) => string;
    /** How the axis's top value reads (short). */
    tickFormat?: (n: number) => string;
  },
) {
  const titleId = useId();
  const descId = useId();
  const fmt = dateFormat(interval);
  const total = series.reduce((n, p) => n + p.value, 0);
  const peak = series.reduce((best, p) => (p.value > best.value ? p : best), {
    t: "",
    value: -1,
  });
  const max = niceMax(Math.max(0, ...series.map((p) => p.value)));
  const innerW = W - PAD.left - PAD.right;
  const innerH = H - PAD.top - PAD.bottom;
  const step = series.length ? innerW / series.length : innerW;
  const barW = Math.max(1, step * 0.7);
  const summary = series.length
    ? `${format(total)}${unit} in total over ${series.length} ${interval}s` +
      (peak.value > 0
        ? `; highest ${format(peak.value)}${unit} on ${fmt.format(new Date(peak.t))}`
        : "")
    : "no data";
  return (
    <figure
      class="chart"
      data-testid={`chart-${id}`}
      data-total={total}
      data-points={series.length}
    >
      <figcaption id={titleId}>
        {title} <span class="chart-total">{format(total)}</span>
      </figcaption>
      <svg
        viewBox={`0 0 ${W} ${H}`}
        role="img"
        aria-labelledby={titleId}
        aria-describedby={descId}
        preserveAspectRatio="none"
      >
        <desc id={descId}>{`${title}: ${summary}.`}</desc>
        <line
          x1={PAD.left}
          x2={W - PAD.right}
          y1={H - PAD.bottom}
          y2={H - PAD.bottom}
          class="axis"
        />
        <text x={PAD.left - 4} y={PAD.top + 8} class="tick" text-anchor="end">
          {tickFormat(max)}
        </text>
        <text x={PAD.left - 4} y={H - PAD.bottom} class="tick" text-anchor="end">0</text>
        {series.map((p, i) => {
          const h = max ? (p.value / max) * innerH : 0;
          return (
            <rect
              key={p.t}
              class="bar"
              x={PAD.left + i * step + (step - barW) / 2}
              y={H - PAD.bottom - h}
              width={barW}
              height={Math.max(h, p.value > 0 ? 1 : 0)}
              data-value={p.value}
            >
              <title>{`${fmt.format(new Date(p.t))}: ${format(p.value)}${unit}`}</title>
            </rect>
          );
        })}
        {series.length > 0 && (
          <>
            <text x={PAD.left} y={H - 4} class="tick">{fmt.format(new Date(series[0].t))}</text>
            <text x={W - PAD.right} y={H - 4} class="tick" text-anchor="end">
              {fmt.format(new Date(series[series.length - 1].t))}
            </text>
          </>
        )}
      </svg>
      <p class="chart-summary">{summary}</p>
      <details>
        <summary>Data</summary>
        <table>
          <thead>
            <tr>
              <th scope="col">{interval === "month" ? "Month" : "From"}</th>
              <th scope="col">{title}</th>
            </tr>
          </thead>
          <tbody>
            {series.map((p) => (
              <tr key={p.t}>
                <td>{fmt.format(new Date(p.t))}</td>
                <td>{format(p.value)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}

export function CountBars(
  { id, title, counts }: { id: string; title: string; counts: Record<string, number> },
) {
  const titleId = useId();
  const entries = Object.entries(counts);
  const max = Math.max(1, ...entries.map(([, v]) => v));
  const total = entries.reduce((n, [, v]) => n + v, 0);
  const rowH = 22;
  const labelW = 110;
  const width = 320;
  return (
    <figure class="chart" data-testid={`chart-${id}`} data-total={total}>
      <figcaption id={titleId}>
        {title} <span class="chart-total">{plain(total)}</span>
      </figcaption>
      <svg
        viewBox={`0 0 ${width} ${entries.length * rowH + 4}`}
        role="img"
        aria-labelledby={titleId}
      >
        <desc>{entries.map(([k, v]) => `${k}: ${v}`).join(", ")}</desc>
        {entries.map(([k, v], i) => {
          const w = ((width - labelW - 40) * v) / max;
          return (
            <g key={k} transform={`translate(0 ${i * rowH + 2})`}>
              <text x={labelW - 6} y={15} class="tick" text-anchor="end">{k}</text>
              <rect class="bar" x={labelW} y={3} height={rowH - 8} width={w} data-value={v} />
              <text x={labelW + w + 4} y={15} class="tick">{v}</text>
            </g>
          );
        })}
      </svg>
    </figure>
  );
}
