/**
 * The system configuration: one typed document, versioned in `app.config_versions`. The shapes
 * and ranges are here; the defaults are not: they are written once, in the database
 * (`app_private.config_defaults()`), because SQL enforces limits and runs scheduled work without
 * the API. The API reads the effective document (`app.effective_config()`: the newest stored
 * version laid over the defaults) and validates it with `configDocument`; admins send deep
 * partials (`configPatch`). A new setting is a key here plus a new version of the defaults.
 */
// The OpenAPI-extended zod: the admin config route names this schema in the OpenAPI document, and
// zod 4 attaches `.openapi()` per schema at creation, so the schema must come from the extended
// `z` whatever module happens to be imported first.
import { z } from "@hono/zod-openapi";

const role = z.enum(["VISITOR", "SUBSCRIBER", "MEMBER", "CONFIDENTIAL", "ADMIN"]);
const hexColor = z.string().regex(/^#[0-9a-fA-F]{6}$/, "a colour like #1f6feb")
  .openapi({ example: "#1f6feb" });
// Both cases spelt out rather than the `i` flag: a JSON Schema pattern has no flags, and the
// OpenAPI document carries this pattern as it is.
const hostname = z.string().max(253).regex(
  /^(?=.{1,253}$)([a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?\.)+[a-zA-Z]{2,63}$/,
  "a host name like community.example.com",
).openapi({ example: "community.example.com" });
const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/, "a 0x-prefixed 20-byte address")
  .openapi({ example: "0x5FbDB2315678afecb367f032d93F642f64180aa3" });
/**
 * The longest message anyone can send, whatever `limits.messageMaxLength` says: the hard ceiling
 * of the `app.messages` content check (`char_length(content) between 1 and 10000`).
 */
export const MESSAGE_LENGTH_CEILING = 10_000;

const channels = z.strictObject({ inApp: z.boolean(), push: z.boolean(), email: z.boolean() });

export const configDocument = z.strictObject({
  system: z.strictObject({
    platformName: z.string().min(1).max(100),
    defaultRole: role.exclude(["ADMIN"]),
    maintenanceMode: z.boolean(),
    signupsOpen: z.boolean(),
  }),
  features: z.strictObject({
    messaging: z.boolean(),
    store: z.boolean(),
    wallet: z.boolean(),
    notifications: z.boolean(),
    /** A provider is enabled when its settings are present and this is not false. */
    signIn: z.strictObject({
      email: z.boolean(),
      google: z.boolean(),
      apple: z.boolean(),
      wallet: z.boolean(),
    }),
  }),
  security: z.strictObject({
    /** A sign-in is "fresh" for this long (key export, account deletion). */
    freshSignInSeconds: z.number().int().min(1).max(86_400),
  }),
  limits: z.strictObject({
    messageMaxLength: z.number().int().min(1).max(MESSAGE_LENGTH_CEILING),
    messageEditWindowMinutes: z.number().int().min(0).max(10_080),
    attachmentMaxBytes: z.number().int().min(1).max(104_857_600),
    groupMaxParticipants: z.number().int().min(2).max(100),
  }),
  whiteLabel: z.strictObject({
    brandName: z.string().min(1).max(100),
    logoUrl: z.url({ protocol: /^https?$/ }).max(2048).nullable(),
    primaryColor: hexColor,
    customDomain: hostname.nullable(),
    supportEmail: z.email().max(320).nullable(),
  }),
  store: z.strictObject({
    currency: z.string().regex(/^[A-Z]{3}$/, "an ISO 4217 code like USD")
      .openapi({ example: "USD" }),
    commissionBps: z.number().int().min(0).max(10_000),
    reservationMinutes: z.number().int().min(1).max(1_440),
    autoCompleteDays: z.number().int().min(1).max(365),
    settlementHourUtc: z.number().int().min(0).max(23),
  }),
  wallet: z.strictObject({
    chainId: z.number().int().positive(),
    confirmations: z.number().int().min(1).max(100),
    pendingTtlSeconds: z.number().int().min(60).max(86_400),
    exportsPerDay: z.number().int().min(1).max(100),
    /** Where the platform's contracts live on the chain (the local stack records its own). */
    contracts: z.strictObject({
      multicall3: address.nullable(),
      utility: address.nullable(),
      governance: address.nullable(),
      staking: address.nullable(),
      erc721: z.array(address).max(50),
      erc1155: z.array(address).max(50),
    }),
  }),
  notifications: z.strictObject({
    bulkMaxRecipients: z.number().int().min(1).max(10_000_000),
    /** The channels of each type for a user who has not chosen. */
    defaults: z.strictObject({
      OPPORTUNITY: channels,
      MESSAGE: channels,
      ENTITY: channels,
      SYSTEM: channels,
      WALLET: channels,
    }),
  }),
  /**
   * How long each append-only table keeps its rows (docs/retention.md); the prune jobs read
   * these when they run. Tables partitioned by day keep whole days (up to a day more).
   */
  retention: z.strictObject({
    /** app.access_logs (partitions dropped). */
    accessLogDays: z.number().int().min(1).max(3_650),
    /** app.security_events: the security record admins investigate with. */
    securityEventDays: z.number().int().min(7).max(3_650),
    /** app.events (partitions dropped): how far back a client can resume. */
    eventDays: z.number().int().min(1).max(30),
    /** Done jobs of the queue (app_private.jobs); also how long a dedupe key holds. */
    doneJobDays: z.number().int().min(1).max(365),
    /** Dead jobs, kept for operators. */
    deadJobDays: z.number().int().min(1).max(3_650),
    /** Finished notification deliveries (the notifications analytics cover this many days). */
    deliveryDays: z.number().int().min(1).max(3_650),
    /** The local stack's realtime.messages (hosted Supabase Realtime prunes its own). */
    realtimeMessageHours: z.number().int().min(1).max(720),
  }),
});
export type ConfigDocument = z.infer<typeof configDocument>;

type Schema = z.ZodType;

/** The same shape with every object level optional and strict: what admins send. */
function deepPartial(schema: Schema): Schema {
  if (schema instanceof z.ZodObject) {
    const shape = Object.fromEntries(
      Object.entries(schema.shape as Record<string, Schema>).map((
        [key, field],
      ) => [key, deepPartial(field).optional()]),
    );
    return z.strictObject(shape);
  }
  return schema;
}

/** The same shape that ignores keys it does not know: how stored documents are read. */
function lenient(schema: Schema): Schema {
  if (schema instanceof z.ZodObject) {
    const shape = Object.fromEntries(
      Object.entries(schema.shape as Record<string, Schema>).map(([key, field]) => [
        key,
        lenient(field),
      ]),
    );
    return z.object(shape);
  }
  return schema;
}

/** A deep partial of the document, as admins send it: unknown keys are refused. */
export const configPatch = deepPartial(configDocument) as z.ZodType<DeepPartial<ConfigDocument>>;
export type ConfigPatch = DeepPartial<ConfigDocument>;
type DeepPartial<T> = T extends unknown[] ? T
  : T extends object ? { [K in keyof T]?: DeepPartial<T[K]> }
  : T;

const storedDocument = lenient(configDocument) as z.ZodType<ConfigDocument>;

/**
 * The effective document as `app.effective_config()` returns it, checked. Keys a stored version
 * has but the schema no longer knows are dropped (history is never rewritten); a migration that
 * changes a setting's type adds a configuration version that converts it.
 */
export function readConfig(effective: unknown): ConfigDocument {
  return storedDocument.parse(effective);
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

function merge(base: unknown, patch: unknown): unknown {
  if (!isObject(base) || !isObject(patch)) return patch === undefined ? base : patch;
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(patch)) out[key] = merge(base[key], value);
  return out;
}

/** Applies a validated patch (objects merged at every depth, values replaced) and checks it. */
export function applyPatch(current: ConfigDocument, patch: ConfigPatch): ConfigDocument {
  return configDocument.parse(merge(current, patch));
}

/** `{ "section.key[.key]": { from, to } }` for every leaf that differs. */
export function diffConfig(
  before: ConfigDocument,
  after: ConfigDocument,
): Record<string, { from: unknown; to: unknown }> {
  const diff: Record<string, { from: unknown; to: unknown }> = {};
  const walk = (from: unknown, to: unknown, path: string) => {
    if (isObject(to)) {
      for (const key of Object.keys(to)) {
        walk(isObject(from) ? from[key] : undefined, to[key], path ? `${path}.${key}` : key);
      }
    } else if (JSON.stringify(from) !== JSON.stringify(to)) {
      diff[path] = { from, to };
    }
  };
  walk(before, after, "");
  return diff;
}
