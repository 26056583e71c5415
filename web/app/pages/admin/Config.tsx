/**
 * Configuration: every setting of the document (GET /api/admin/config) as a form field made from
 * its value (a checkbox, a number, a text; empty text is null where null is allowed), the
 * white-label with a live preview of the brand (header, button, link, contrast), and saving the
 * changed leaves only, with a reason and the version read (a change saved meanwhile is a 409).
 * Sections added by later domains appear here by themselves.
 */
import { useEffect, useId, useState } from "preact/hooks";
import { ApiError, client, data, describeError, type RequestBody } from "../../lib/client.ts";
import { brandColours, contrast, loadConfig, styleFor } from "../../lib/config.ts";
import { ROLES } from "../../lib/session.ts";
import type { ConfigDocument as TypedDocument } from "./types.ts";
import { queryClient } from "../../lib/query.ts";
import { CONFIG_VERSIONS_KEY, ConfigHistory, settingValue } from "./ConfigHistory.tsx";

/**
 * The page edits every section alike, by path: the document as a record of sections (the typed
 * document of the API, `TypedDocument`, is what it reads and sends).
 */
type ConfigDocument = Record<string, Record<string, unknown>>;
const asSections = (doc: TypedDocument) => doc as unknown as ConfigDocument;

type Json = unknown;

/** The leaves that differ, as a deep partial (what PUT /api/admin/config takes). */
function patchOf(before: Json, after: Json): Json | undefined {
  if (
    before && after && typeof before === "object" && typeof after === "object" &&
    !Array.isArray(before) && !Array.isArray(after)
  ) {
    const out: Record<string, Json> = {};
    for (const key of Object.keys(after as object)) {
      const d = patchOf(
        (before as Record<string, Json>)[key],
        (after as Record<string, Json>)[key],
      );
      if (d !== undefined) out[key] = d;
    }
    return Object.keys(out).length ? out : undefined;
  }
  return JSON.stringify(before) === JSON.stringify(after) ? undefined : after;
}

function setIn(doc: ConfigDocument, path: string[], value: Json): ConfigDocument {
  const copy = structuredClone(doc) as Record<string, Json>;
  let node = copy;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string, Json>;
  node[path[path.length - 1]] = value;
  return copy as ConfigDocument;
}

/** The configuration document's keys in words (a key not listed falls back to its split name). */
const LABELS: Record<string, string> = {
  system: "System",
  platformName: "Platform name",
  defaultRole: "Role of new users",
  maintenanceMode: "Maintenance mode",
  signupsOpen: "New sign-ups open",
  features: "Features",
  messaging: "Messaging",
  store: "Store",
  wallet: "Wallet",
  notifications: "Notifications",
  signIn: "Ways to sign in",
  email: "E-mail",
  google: "Google",
  apple: "Apple",
  security: "Security",
  freshSignInSeconds: "Fresh sign-in for sensitive actions (seconds)",
  limits: "Limits",
  messageMaxLength: "Longest message (characters)",
  messageEditWindowMinutes: "Message edit window (minutes)",
  attachmentMaxBytes: "Largest attachment (bytes)",
  groupMaxParticipants: "Largest group (people)",
  whiteLabel: "White label",
  brandName: "Brand name",
  logoUrl: "Logo URL",
  primaryColor: "Primary colour",
  customDomain: "Custom domain",
  supportEmail: "Support e-mail address",
  currency: "Currency",
  commissionBps: "Commission (basis points)",
  reservationMinutes: "Checkout reservation (minutes)",
  autoCompleteDays: "Orders complete after (days)",
  settlementHourUtc: "Settlement hour (UTC)",
  chainId: "Chain id",
  confirmations: "Confirmations required",
  pendingTtlSeconds: "Unconfirmed transfers expire after (seconds)",
  exportsPerDay: "Key exports per day",
  contracts: "Contracts",
  multicall3: "Multicall3 contract",
  utility: "Utility token contract",
  governance: "Governance token contract",
  staking: "Staking rewards contract",
  erc721: "ERC-721 contracts",
  erc1155: "ERC-1155 contracts",
  bulkMaxRecipients: "Most recipients of a bulk send",
  defaults: "Default channels per type",
  OPPORTUNITY: "Opportunities",
  MESSAGE: "Messages",
  ENTITY: "Updates on things you follow",
  SYSTEM: "System notices",
  WALLET: "Wallet",
  inApp: "In the app",
  push: "Push",
  retention: "Retention",
  accessLogDays: "Access log kept (days)",
  securityEventDays: "Security events kept (days)",
  eventDays: "Live events kept (days)",
  doneJobDays: "Finished jobs kept (days)",
  deadJobDays: "Failed jobs kept (days)",
  deliveryDays: "Delivery records kept (days)",
  realtimeMessageHours: "Realtime messages kept (hours)",
};

/** A key in words: the map above, else `someKey` → "Some key". */
export const label = (key: string) =>
  LABELS[key] ??
    key.replace(/([a-z])([A-Z0-9])/g, "$1 $2").toLowerCase().replace(/^./, (c) => c.toUpperCase())
      .replace(/\burl\b/, "URL");

/** Keys whose value may be null (empty text saves null). */
const NULLABLE = /logoUrl|customDomain|supportEmail|contracts\./;

export function ConfigSection({ refresh }: { refresh: number }) {
  const reasonId = useId();
  const [loaded, setLoaded] = useState<{ version: number; config: ConfigDocument } | null>(null);
  const [draft, setDraft] = useState<ConfigDocument | null>(null);
  const [reason, setReason] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [fieldErrors, setFieldErrors] = useState<{ path: string; message: string }[]>([]);
  const [saved, setSaved] = useState<Record<string, { from: Json; to: Json }> | null>(null);
  const [busy, setBusy] = useState(false);

  const load = () =>
    client.GET("/api/admin/config").then(data).then((c) => {
      setLoaded({ version: c.version, config: asSections(c.config) });
      setDraft(asSections(c.config));
      setError(null);
    }).catch((err) => setError(describeError(err)));
  useEffect(() => {
    void load();
    if (refresh) void queryClient.invalidateQueries({ queryKey: CONFIG_VERSIONS_KEY });
  }, [refresh]);

  if (!draft || !loaded) {
    return (
      <section>
        <h1>Configuration</h1>
        {error ? <p class="error" role="alert">{error}</p> : <p role="status">Loading…</p>}
      </section>
    );
  }
  const patch = patchOf(loaded.config, draft);
  const change = (path: string[], value: Json) => {
    setDraft(setIn(draft, path, value));
    setSaved(null);
  };

  async function save(e: Event) {
    e.preventDefault();
    if (!patch) return;
    if (!reason.trim()) return setError("Give a reason: it is recorded with the change.");
    setBusy(true);
    setError(null);
    setFieldErrors([]);
    try {
      const result = data(
        await client.PUT("/api/admin/config", {
          body: {
            config: patch as RequestBody<"/api/admin/config", "put">["config"],
            reason: reason.trim(),
            expectedVersion: loaded!.version,
          },
        }),
      );
      setLoaded({ version: result.version, config: asSections(result.config) });
      setDraft(asSections(result.config));
      setSaved(result.diff as Record<string, { from: Json; to: Json }>);
      setReason("");
      void queryClient.invalidateQueries({ queryKey: CONFIG_VERSIONS_KEY });
      // The white-label applies to this page at once (others on their next read, within 30 s).
      await loadConfig(true);
    } catch (err) {
      if (err instanceof ApiError && err.status === 409) {
        setError("Someone saved a change meanwhile. Reload to see it, then apply yours again.");
      } else {
        setError(describeError(err));
        if (err instanceof ApiError && Array.isArray(err.details)) {
          setFieldErrors(err.details as { path: string; message: string }[]);
        }
      }
    } finally {
      setBusy(false);
    }
  }

  // The white-label first: it is what changes most, and its preview belongs at the top.
  const sections = Object.keys(draft).sort((a, b) =>
    Number(b === "whiteLabel") - Number(a === "whiteLabel")
  );
  return (
    <section class="config">
      <h1>Configuration</h1>
      <p class="muted">Version {loaded.version}. Only the settings you change are saved.</p>
      <form onSubmit={save}>
        {sections.map((section) => (
          <fieldset
            key={section}
            class={section === "whiteLabel" ? "config-section white-label" : "config-section"}
          >
            <legend>{label(section)}</legend>
            <Fields
              value={draft[section]}
              path={[section]}
              original={loaded.config[section]}
              onChange={change}
            />
            {section === "whiteLabel" && (
              <WhiteLabelPreview whiteLabel={draft.whiteLabel as Record<string, Json>} />
            )}
          </fieldset>
        ))}
        <div class="save-bar">
          <label for={reasonId}>Reason for the change (recorded)</label>
          <input
            id={reasonId}
            value={reason}
            maxLength={500}
            onInput={(e) => setReason(e.currentTarget.value)}
          />
          {error && <p class="error" role="alert">{error}</p>}
          {fieldErrors.length > 0 && (
            <ul class="error">
              {fieldErrors.map((f) => <li key={f.path}>{f.path}: {f.message}</li>)}
            </ul>
          )}
          {saved && (
            <div class="success" role="status">
              Saved as version {loaded.version}:
              <ul>
                {Object.entries(saved).map(([path, d]) => (
                  <li key={path}>
                    {path.split(".").map(label).join(" › ")}: {settingValue(d.from)} →{" "}
                    {settingValue(d.to)}
                  </li>
                ))}
              </ul>
            </div>
          )}
          <div class="dialog-actions">
            <button
              type="button"
              class="secondary"
              disabled={!patch}
              onClick={() => setDraft(loaded.config)}
            >
              Discard changes
            </button>
            <button type="submit" disabled={busy || !patch}>Save configuration</button>
          </div>
        </div>
      </form>
      <ConfigHistory label={label} />
    </section>
  );
}

function Fields(
  { value, original, path, onChange }: {
    value: Json;
    original: Json;
    path: string[];
    onChange: (path: string[], value: Json) => void;
  },
) {
  const entries = Object.entries(value as Record<string, Json>);
  return (
    <div class="fields">
      {entries.map(([key, v]) => {
        const here = [...path, key];
        const was = (original as Record<string, Json> | undefined)?.[key];
        if (v && typeof v === "object" && !Array.isArray(v)) {
          return (
            <fieldset key={key} class="config-group">
              <legend>{label(key)}</legend>
              <Fields value={v} original={was} path={here} onChange={onChange} />
            </fieldset>
          );
        }
        return <Field key={key} path={here} value={v} original={was} onChange={onChange} />;
      })}
    </div>
  );
}

function Field(
  { path, value, original, onChange }: {
    path: string[];
    value: Json;
    original: Json;
    onChange: (path: string[], value: Json) => void;
  },
) {
  const id = useId();
  const key = path[path.length - 1];
  const dotted = path.join(".");
  const changed = JSON.stringify(value) !== JSON.stringify(original);
  const mark = changed ? <span class="changed">(changed)</span> : null;
  if (typeof value === "boolean") {
    return (
      <div class="field check">
        <input
          id={id}
          type="checkbox"
          checked={value}
          onChange={(e) => onChange(path, e.currentTarget.checked)}
        />
        <label for={id}>{label(key)}{mark}</label>
      </div>
    );
  }
  if (typeof value === "number") {
    return (
      <div class="field">
        <label for={id}>{label(key)}{mark}</label>
        <input
          id={id}
          type="number"
          value={String(value)}
          onInput={(e) => {
            const n = e.currentTarget.valueAsNumber;
            if (!Number.isNaN(n)) onChange(path, n);
          }}
        />
      </div>
    );
  }
  if (Array.isArray(value)) {
    return (
      <div class="field">
        <span class="field-label">{label(key)}</span>
        <code class="readonly">{JSON.stringify(value)}</code>
        <span class="muted">(a list: change it through the API)</span>
      </div>
    );
  }
  if (key === "defaultRole") {
    return (
      <div class="field">
        <label for={id}>{label(key)}{mark}</label>
        <select
          id={id}
          value={String(value)}
          onChange={(e) => onChange(path, e.currentTarget.value)}
        >
          {ROLES.filter((r) => r !== "ADMIN").map((r) => <option key={r} value={r}>{r}</option>)}
        </select>
      </div>
    );
  }
  const colour = /color$/i.test(key);
  return (
    <div class="field">
      <label for={id}>{label(key)}{mark}</label>
      <div class={colour ? "colour-input" : undefined}>
        {colour && (
          <input
            type="color"
            aria-label={`${label(key)} picker`}
            value={typeof value === "string" ? value : "#000000"}
            onInput={(e) => onChange(path, e.currentTarget.value)}
          />
        )}
        <input
          id={id}
          type="text"
          value={value === null ? "" : String(value)}
          placeholder={NULLABLE.test(dotted) ? "(none)" : undefined}
          onInput={(e) => {
            const text = e.currentTarget.value;
            onChange(path, text === "" && NULLABLE.test(dotted) ? null : text);
          }}
        />
      </div>
    </div>
  );
}

function WhiteLabelPreview({ whiteLabel }: { whiteLabel: Record<string, Json> }) {
  const primary = /^#[0-9a-f]{6}$/i.test(String(whiteLabel.primaryColor))
    ? String(whiteLabel.primaryColor)
    : "#1f6feb";
  const c = brandColours(primary);
  const name = String(whiteLabel.brandName || "Brand");
  const logo = typeof whiteLabel.logoUrl === "string" ? whiteLabel.logoUrl : null;
  const ratio = contrast(c.brand, c.onBrand);
  return (
    <figure class="wl-preview" style={styleFor({ primaryColor: primary })} data-testid="wl-preview">
      <figcaption>White-label preview (not saved yet)</figcaption>
      <div class="wl-bar">
        {logo
          ? <img src={logo} alt="" width={24} height={24} />
          : <span class="brand-mark" aria-hidden="true">{name.slice(0, 1)}</span>}
        <strong data-testid="wl-preview-name">{name}</strong>
      </div>
      <div class="wl-content">
        <span class="button">A primary button</span>{" "}
        <span class="wl-link">a link in the brand colour</span>
        <p class="muted">
          Text on the brand colour: {ratio.toFixed(1)}:1{" "}
          {ratio >= 4.5 ? "(meets WCAG AA)" : "(below 4.5:1: the header text may be hard to read)"}
          {c.brandText !== c.brand && " · links are darkened to stay readable on white"}
        </p>
      </div>
    </figure>
  );
}
