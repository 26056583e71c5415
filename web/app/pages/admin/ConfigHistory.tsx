/**
 * The configuration's history (GET /api/admin/config/versions): newest first, each version with
 * when, who, why, and what changed (path: from → to), in words; "Load more" for older ones.
 */
import { client, data, describeError, FRESH } from "../../lib/client.ts";
import { useInfiniteQuery } from "../../lib/query.ts";
import { fullTime } from "../../lib/format.ts";
import { ADMIN_KEY } from "./types.ts";

export const CONFIG_VERSIONS_KEY = [...ADMIN_KEY, "config-versions"] as const;

/** A setting's value as text: none, yes/no, lists joined, anything else compact. */
export function settingValue(value: unknown): string {
  if (value === undefined || value === null || value === "") return "none";
  if (typeof value === "boolean") return value ? "yes" : "no";
  if (typeof value === "string" || typeof value === "number") return String(value);
  if (Array.isArray(value)) return value.length ? value.map(settingValue).join(", ") : "none";
  return Object.entries(value as Record<string, unknown>)
    .map(([k, v]) => `${k}: ${settingValue(v)}`)
    .join("; ");
}

export function ConfigHistory({ label }: { label: (key: string) => string }) {
  const versions = useInfiniteQuery({
    queryKey: CONFIG_VERSIONS_KEY,
    queryFn: async ({ pageParam }) =>
      data(
        await client.GET("/api/admin/config/versions", {
          params: { query: { limit: 20, ...(pageParam ? { cursor: pageParam } : {}) } },
          ...FRESH,
        }),
      ),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.nextCursor,
  });
  const items = versions.data?.pages.flatMap((p) => p.items) ?? null;
  const pathLabel = (path: string) => path.split(".").map(label).join(" › ");
  return (
    <section aria-labelledby="config-history-h" class="config-history">
      <h2 id="config-history-h">History</h2>
      {versions.error && <p class="error" role="alert">{describeError(versions.error)}</p>}
      {items === null
        ? !versions.error && <p role="status">Loading…</p>
        : items.length === 0
        ? <p class="muted">No version saved yet.</p>
        : (
          <ol class="plain-list" data-testid="config-versions">
            {items.map((v) => (
              <li key={v.version} class="card" data-version={v.version}>
                <p>
                  <strong>Version {v.version}</strong>{" "}
                  <span class="muted small">
                    {fullTime(v.createdAt)} · by {v.changedBy?.name ?? "a removed account"}
                  </span>
                </p>
                <p data-testid="config-version-reason">{v.reason}</p>
                <ul class="config-diff">
                  {Object.entries(v.diff).map(([path, d]) => (
                    <li key={path} data-path={path}>
                      <span>{pathLabel(path)}</span>:{" "}
                      <span class="muted">{settingValue(d.from)}</span>
                      {" → "}
                      <strong>{settingValue(d.to)}</strong>
                    </li>
                  ))}
                </ul>
              </li>
            ))}
          </ol>
        )}
      {versions.hasNextPage && (
        <button
          type="button"
          class="secondary"
          disabled={versions.isFetchingNextPage}
          onClick={() => void versions.fetchNextPage()}
        >
          Load more
        </button>
      )}
    </section>
  );
}
