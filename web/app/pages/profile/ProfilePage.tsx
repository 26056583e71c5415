/**
 * The profile: the name and picture everyone sees (the directory, conversations, notifications),
 * a short bio, and the time zone and locale only the person sees. The picture is uploaded as an
 * attachment (POST /api/attachments) and then made the profile's (PUT /api/profile `imageId`);
 * "Remove picture" sends `imageId: null`. After each change the header shows the new name and
 * picture at once (the session store is updated; `profile.updated` on `user:<id>` does the same
 * in the person's other tabs). Below, the people the person blocks, each with Unblock.
 */
import { useEffect, useState } from "preact/hooks";
import { upload } from "../../lib/files.ts";
import { client, data, describeError, FRESH, type Schema } from "../../lib/client.ts";
import { queryClient, useQuery } from "../../lib/query.ts";
import { session } from "../../lib/session.ts";
import { useStore } from "../../lib/store.ts";
import { userEvents } from "../../lib/user-events.ts";
import { Avatar } from "../../components/Avatar.tsx";
import { BlockedPeople } from "../people/PersonPage.tsx";

type Profile = Schema<"Profile">;
type ProfileChange = Schema<"ProfileChange">;

/** The caller's profile in the query cache. */
export const PROFILE_KEY = ["profile"] as const;

// A change from another tab or device (or an ADMIN's role change): read the profile again.
userEvents.on((e) => {
  if (e.event === "profile.updated") void queryClient.invalidateQueries({ queryKey: PROFILE_KEY });
});

const updateProfile = async (change: ProfileChange) =>
  data(await client.PUT("/api/profile", { body: change }));

const IMAGE_TYPES = "image/png,image/jpeg,image/gif,image/webp";

/** Every IANA zone the browser knows, for the time-zone list (empty where it cannot tell). */
function timeZones(): string[] {
  try {
    return (Intl as unknown as { supportedValuesOf(key: string): string[] })
      .supportedValuesOf("timeZone");
  } catch {
    return [];
  }
}

/** The form's fields, as text. */
type Draft = { name: string; bio: string; timeZone: string; locale: string };

/** The form as the profile fills it. */
function formOf(p: Profile): Draft {
  return { name: p.name, bio: p.bio ?? "", timeZone: p.timeZone ?? "", locale: p.locale ?? "" };
}

/** Shows the saved name and picture in the header at once. */
function showInHeader(profile: Profile) {
  const state = session.get();
  if (state.status !== "signed-in") return;
  session.set({
    status: "signed-in",
    user: { ...state.user, name: profile.name, image: profile.image },
  });
}

export function ProfilePage() {
  const me = useStore(session).user!;
  const query = useQuery({
    queryKey: PROFILE_KEY,
    queryFn: async () => data(await client.GET("/api/profile", FRESH)),
  });
  const profile = query.data ?? null;
  /** What the person changed in the form; every other field shows the profile as read. */
  const [edits, setEdits] = useState<Partial<Draft>>({});
  const [saving, setSaving] = useState(false);
  const [progress, setProgress] = useState<number | null>(null);
  const [message, setMessage] = useState<{ ok: boolean; text: string } | null>(null);

  // The saved profile goes into the cache; the effect below shows it in the header.
  const take = (p: Profile) => queryClient.setQueryData(PROFILE_KEY, p);

  // A profile read or saved (here, in another tab, by an ADMIN) shows in the header, and in every
  // field of the form the person has not changed here; what they typed stays until they save.
  useEffect(() => {
    if (profile) showInHeader(profile);
  }, [profile?.id, query.dataUpdatedAt]);

  if (!profile) {
    return (
      <div class="page profile">
        <h1>Your profile</h1>
        {query.error
          ? <p class="error" role="alert">{describeError(query.error)}</p>
          : <p class="muted">Loading…</p>}
      </div>
    );
  }

  const draft: Draft = { ...formOf(profile), ...edits };
  const edit = (change: Partial<Draft>) => setEdits((now) => ({ ...now, ...change }));

  const save = async (e: Event) => {
    e.preventDefault();
    const change: ProfileChange = {};
    if (draft.name.trim() !== profile.name) change.name = draft.name;
    if (draft.bio.trim() !== (profile.bio ?? "")) change.bio = draft.bio.trim() || null;
    if (draft.timeZone !== (profile.timeZone ?? "")) change.timeZone = draft.timeZone || null;
    if (draft.locale.trim() !== (profile.locale ?? "")) {
      change.locale = draft.locale.trim() || null;
    }
    setSaving(true);
    setMessage(null);
    try {
      take(await updateProfile(change));
      setEdits({});
      setMessage({ ok: true, text: "Saved." });
    } catch (err) {
      setMessage({ ok: false, text: describeError(err) });
    } finally {
      setSaving(false);
    }
  };

  const choosePicture = async (e: Event) => {
    const input = e.currentTarget as HTMLInputElement;
    const file = input.files?.[0];
    input.value = "";
    if (!file) return;
    setMessage(null);
    setProgress(0);
    try {
      const uploaded = await upload<{ id: string }>("/api/attachments", file, setProgress);
      take(await updateProfile({ imageId: uploaded.id }));
      setMessage({ ok: true, text: "Picture saved." });
    } catch (err) {
      setMessage({ ok: false, text: describeError(err) });
    } finally {
      setProgress(null);
    }
  };

  const removePicture = async () => {
    setMessage(null);
    try {
      take(await updateProfile({ imageId: null }));
      setMessage({ ok: true, text: "Picture removed." });
    } catch (err) {
      setMessage({ ok: false, text: describeError(err) });
    }
  };

  const zones = timeZones();
  return (
    <div class="page profile">
      <h1>Your profile</h1>
      <p class="muted">
        Your name and picture are what everyone sees in the directory, in conversations and in
        notifications. Your time zone and language are only yours.
      </p>
      <section class="card" aria-labelledby="picture-h">
        <h2 id="picture-h">Picture</h2>
        <div class="profile-picture">
          <span data-testid="profile-picture">
            <Avatar id={me.id} name={profile.name} image={profile.image} size={72} />
          </span>
          <div>
            <label for="profile-image" class="button secondary small">
              {profile.image ? "Change picture" : "Upload a picture"}
            </label>
            <input
              id="profile-image"
              type="file"
              accept={IMAGE_TYPES}
              class="visually-hidden"
              onChange={choosePicture}
              disabled={progress !== null}
            />
            {profile.image && (
              <button type="button" class="secondary small" onClick={removePicture}>
                Remove picture
              </button>
            )}
            {progress !== null && (
              <progress max={1} value={progress} aria-label="Uploading the picture" />
            )}
            <p class="muted small">PNG, JPEG, GIF or WebP.</p>
          </div>
        </div>
      </section>
      <form class="card" onSubmit={save} aria-labelledby="details-h">
        <h2 id="details-h">Details</h2>
        <label for="profile-name">Display name</label>
        <input
          id="profile-name"
          required
          maxLength={64}
          value={draft.name}
          onInput={(e) => edit({ name: e.currentTarget.value })}
        />
        <label for="profile-bio">About you</label>
        <textarea
          id="profile-bio"
          rows={3}
          maxLength={500}
          value={draft.bio}
          onInput={(e) => edit({ bio: e.currentTarget.value })}
        />
        <div class="fields">
          <div>
            <label for="profile-tz">Time zone</label>
            {zones.length
              ? (
                <select
                  id="profile-tz"
                  value={draft.timeZone}
                  onChange={(e) => edit({ timeZone: e.currentTarget.value })}
                >
                  <option value="">Not set</option>
                  {draft.timeZone && !zones.includes(draft.timeZone) && (
                    <option value={draft.timeZone}>{draft.timeZone}</option>
                  )}
                  {zones.map((z) => <option key={z} value={z}>{z}</option>)}
                </select>
              )
              : (
                <input
                  id="profile-tz"
                  placeholder="Europe/Berlin"
                  value={draft.timeZone}
                  onInput={(e) => edit({ timeZone: e.currentTarget.value })}
                />
              )}
          </div>
          <div>
            <label for="profile-locale">Language (BCP 47, e.g. de-CH)</label>
            <input
              id="profile-locale"
              maxLength={64}
              placeholder={navigator.language}
              value={draft.locale}
              onInput={(e) => edit({ locale: e.currentTarget.value })}
            />
          </div>
        </div>
        <p>
          <button type="submit" disabled={saving}>{saving ? "Saving…" : "Save"}</button>
        </p>
      </form>
      {message && (
        <p class={message.ok ? "success" : "error"} role={message.ok ? "status" : "alert"}>
          {message.text}
        </p>
      )}
      <BlockedPeople />
    </div>
  );
}
