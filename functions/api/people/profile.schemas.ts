/**
 * The profile's fields as the API reads and shows them (people/profile.routes.ts,
 * people/users.routes.ts): the rules of the contract's "Community" section, checked here before
 * the database checks the name and the picture again (`users_guard_profile`).
 */
import { z } from "@hono/zod-openapi";
import { ROLES } from "../core/context.ts";

// deno-lint-ignore no-control-regex
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/;

const characters = (s: string) => Array.from(s).length;

/** An IANA time zone the runtime knows, in its canonical spelling, or null. */
export function canonicalTimeZone(zone: string): string | null {
  // Offsets ("+02:00") are not zones; names are letters, digits, "_", "-", "+" and "/".
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]{0,63}$/.test(zone)) return null;
  try {
    return new Intl.DateTimeFormat("en-US", { timeZone: zone }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}

/** A BCP 47 language tag in its canonical form ("de-ch" → "de-CH"), or null. */
export function canonicalLocale(tag: string): string | null {
  try {
    const [canonical] = Intl.getCanonicalLocales(tag);
    return canonical && canonical.length <= 64 ? canonical : null;
  } catch {
    return null;
  }
}

export const profileName = z.string().trim()
  .refine((s) => characters(s) >= 1 && characters(s) <= 64, "1 to 64 characters after trimming")
  .refine((s) => !CONTROL_CHARACTERS.test(s), "no control characters")
  .openapi({ example: "Ada Lovelace" });

export const profileChangeSchema = z.strictObject({
  name: profileName.optional().openapi({ description: "1-64 characters after trimming" }),
  bio: z.string().trim().refine((s) => characters(s) <= 500, "at most 500 characters")
    .nullable().optional().openapi({ description: "Up to 500 characters; null or empty clears" }),
  timeZone: z.string().max(64).refine((s) => canonicalTimeZone(s) !== null, "an IANA time zone")
    .nullable().optional().openapi({ example: "Europe/Berlin", description: "null clears" }),
  locale: z.string().max(64).refine((s) => canonicalLocale(s) !== null, "a BCP 47 language tag")
    .nullable().optional().openapi({ example: "de-CH", description: "null clears" }),
  imageId: z.uuid().nullable().optional().openapi({
    description: "An upload of the caller's own (POST /api/attachments) of type PNG, JPEG, GIF " +
      "or WebP (415 otherwise; another person's: 404); null removes the picture",
  }),
}).openapi("ProfileChange");

export const ownProfileSchema = z.object({
  id: z.uuid(),
  name: z.string(),
  image: z.string().nullable().openapi({
    description: "A URL anyone who may see the profile may fetch (an uploaded picture: " +
      "`/api/users/{id}/image?v=<version>`), or null",
  }),
  bio: z.string().nullable(),
  timeZone: z.string().nullable(),
  locale: z.string().nullable(),
}).openapi("Profile");

export const publicProfileSchema = z.object({
  id: z.uuid(),
  name: z.string(),
  image: z.string().nullable(),
  bio: z.string().nullable(),
  role: z.enum(ROLES),
}).openapi("PublicProfile");
