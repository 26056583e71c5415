/**
 * The system configuration: one typed document, versioned in `app.config_versions`. Stored
 * documents may be partial; reading always fills the defaults below, so adding a setting never
 * needs a data migration. Admin updates are deep partials checked against the same schema.
 */
// The OpenAPI-extended zod: the admin config route names this schema in the OpenAPI document, and
// zod 4 attaches `.openapi()` per schema at creation, so the schema must come from the extended
// `z` whatever module happens to be imported first.
import { z } from "@hono/zod-openapi";

const role = z.enum(["VISITOR", "SUBSCRIBER", "MEMBER", "CONFIDENTIAL", "ADMIN"]);
const hexColor = z.string().regex(/^#[0-9a-fA-F]{6}$/, "a colour like #1f6feb");
const hostname = z.string().max(253).regex(
  /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/i,
  "a host name like community.example.com",
);

export const configDocument = z.strictObject({
  system: z.strictObject({
    platformName: z.string().min(1).max(100).default("Agora"),
    defaultRole: role.exclude(["ADMIN"]).default("SUBSCRIBER"),
    maintenanceMode: z.boolean().default(false),
    signupsOpen: z.boolean().default(true),
  }).prefault({}),
  features: z.strictObject({
    messaging: z.boolean().default(true),
    store: z.boolean().default(true),
    wallet: z.boolean().default(true),
    notifications: z.boolean().default(true),
    signInWithEmail: z.boolean().default(true),
    signInWithGoogle: z.boolean().default(false),
    signInWithApple: z.boolean().default(false),
    signInWithWallet: z.boolean().default(false),
  }).prefault({}),
  limits: z.strictObject({
    messageMaxLength: z.number().int().min(1).max(10_000).default(10_000),
    messageEditWindowMinutes: z.number().int().min(0).max(10_080).default(15),
    attachmentMaxBytes: z.number().int().min(1).max(104_857_600).default(10_485_760),
    groupMaxParticipants: z.number().int().min(2).max(100).default(100),
  }).prefault({}),
  whiteLabel: z.strictObject({
    brandName: z.string().min(1).max(100).default("Agora"),
    logoUrl: z.url({ protocol: /^https?$/ }).max(2048).nullable().default(null),
    primaryColor: hexColor.default("#1f6feb"),
    customDomain: hostname.nullable().default(null),
    supportEmail: z.email().max(320).nullable().default(null),
  }).prefault({}),
  store: z.strictObject({
    currency: z.string().regex(/^[A-Z]{3}$/, "an ISO 4217 code like USD").default("USD"),
    platformFeeBps: z.number().int().min(0).max(10_000).default(500),
    settlementHourUtc: z.number().int().min(0).max(23).default(2),
  }).prefault({}),
  wallet: z.strictObject({
    chainId: z.number().int().positive().default(31_337),
    confirmationsRequired: z.number().int().min(0).max(100).default(1),
  }).prefault({}),
  notifications: z.strictObject({
    pushEnabled: z.boolean().default(false),
    bulkMaxRecipients: z.number().int().min(1).max(1_000_000).default(10_000),
  }).prefault({}),
});
export type ConfigDocument = z.infer<typeof configDocument>;

/** A deep partial of the document, as admins send it: unknown keys are refused. */
export const configPatch = z.strictObject(
  Object.fromEntries(
    Object.entries(configDocument.shape).map(([key, section]) => {
      const inner = (section as unknown as { def: { innerType: z.ZodObject } }).def.innerType;
      const fields = Object.fromEntries(
        Object.entries(inner.shape).map(([name, field]) => [
          name,
          (field as z.ZodDefault<z.ZodType>).unwrap().optional(),
        ]),
      );
      return [key, z.strictObject(fields).optional()];
    }),
  ),
);
export type ConfigPatch = z.infer<typeof configPatch>;

/** Fills defaults into a stored (possibly partial) document. */
export function readConfig(stored: unknown): ConfigDocument {
  return configDocument.parse(stored ?? {});
}

/** Applies a validated patch and returns the full new document. */
export function applyPatch(current: ConfigDocument, patch: ConfigPatch): ConfigDocument {
  const next: Record<string, Record<string, unknown>> = structuredClone(current);
  for (const [section, values] of Object.entries(patch)) {
    if (!values) continue;
    for (const [key, value] of Object.entries(values)) {
      if (value !== undefined) next[section][key] = value;
    }
  }
  return configDocument.parse(next);
}

/** `{ "section.key": { from, to } }` for every leaf that differs. */
export function diffConfig(
  before: ConfigDocument,
  after: ConfigDocument,
): Record<string, { from: unknown; to: unknown }> {
  const diff: Record<string, { from: unknown; to: unknown }> = {};
  const b = before as unknown as Record<string, Record<string, unknown>>;
  const a = after as unknown as Record<string, Record<string, unknown>>;
  for (const section of Object.keys(a)) {
    for (const key of Object.keys(a[section])) {
      const from = b[section]?.[key];
      const to = a[section][key];
      if (JSON.stringify(from) !== JSON.stringify(to)) diff[`${section}.${key}`] = { from, to };
    }
  }
  return diff;
}
