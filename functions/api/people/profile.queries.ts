/**
 * Queries of /api/profile and /api/users/{id} (people/profile.routes.ts, people/users.routes.ts),
 * run as the caller. A profile is the caller's own row of app.users (RLS shows it); another
 * person's is read through `app.user_profile` and `app.profile_image` (public fields only).
 */
import type { Tx } from "../../_shared/db.ts";
import type { Role } from "../core/context.ts";

/** The caller's own profile, as GET and PUT /api/profile answer. */
export interface OwnProfile {
  id: string;
  name: string;
  image: string | null;
  bio: string | null;
  timeZone: string | null;
  locale: string | null;
}

/** What GET /api/users/{id} and the `profile.updated` event show anyone who may see it. */
export interface PublicProfile {
  id: string;
  name: string;
  image: string | null;
  bio: string | null;
  role: Role;
}

/** A change to the caller's profile: a field that is absent is left as it is. */
export interface ProfileChange {
  name?: string;
  bio?: string | null;
  timeZone?: string | null;
  locale?: string | null;
  imageId?: string | null;
}

export async function readOwnProfile(tx: Tx): Promise<OwnProfile> {
  const [row] = await tx<OwnProfile[]>`
    select id, name, image, bio, time_zone as "timeZone", locale
    from app.users where id = (select auth.uid())`;
  return row;
}

/**
 * Changes the caller's profile in one statement. `users_guard_profile` checks the name again and
 * the image: an upload of the caller's own (AG404) with an image type (AG415), and writes `image`
 * from it; `users_publish_profile` emits `profile.updated`.
 */
export async function updateOwnProfile(tx: Tx, change: ProfileChange): Promise<OwnProfile> {
  const has = (key: keyof ProfileChange) => change[key] !== undefined;
  const [row] = await tx<OwnProfile[]>`
    update app.users set
      name = case when ${has("name")} then ${change.name ?? null}::text else name end,
      bio = case when ${has("bio")} then ${change.bio ?? null}::text else bio end,
      time_zone = case when ${has("timeZone")} then ${change.timeZone ?? null}::text
        else time_zone end,
      locale = case when ${has("locale")} then ${change.locale ?? null}::text else locale end,
      image_attachment_id = case when ${has("imageId")} then ${change.imageId ?? null}::uuid
        else image_attachment_id end
    where id = (select auth.uid())
    returning id, name, image, bio, time_zone as "timeZone", locale`;
  return row;
}

/** An active user's public profile (SUBSCRIBER and above), or null: 404. */
export async function readPublicProfile(tx: Tx, id: string): Promise<PublicProfile | null> {
  const [row] = await tx<{ profile: PublicProfile | null }[]>`
    select app.user_profile(${id}::uuid) as profile`;
  return row.profile;
}

/** The stored file of an active user's uploaded picture, or null. */
export async function findProfileImage(tx: Tx, id: string) {
  const [row] = await tx<{ content_type: string; storage_key: string }[]>`
    select content_type, storage_key from app.profile_image(${id}::uuid)`;
  return row ?? null;
}
