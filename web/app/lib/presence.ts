/**
 * Presence, app-wide: a person is online while they have the app open on any page, signed in.
 *
 * Each signed-in page tracks its person on their own private channel, `presence:<user id>`
 * (supabase-js Presence, as hosted Supabase Realtime does it; the local gateway alike). A
 * conversation's view listens, without tracking, on the presence channels of the other
 * participants it shows (`presenceWatcher`: at most `MAX_WATCHED` at a time, joined and left as
 * the person scrolls a large group's participants: pages/chat/participant-presence.ts): someone
 * is online while their channel holds at least one presence (one per open tab). Who may listen is the database's rule (`app.can_see_presence`): the person, and whoever
 * shares a conversation with them and is not blocked by them; only the person may track.
 *
 * A supabase-js client of its own: the transport's client keeps one channel per topic for its
 * broadcasts and leaves it when it falls back to SSE, while presence lives only on the socket.
 * When the WebSocket cannot connect, presence is simply unknown (the page says so).
 */
import type { RealtimeChannel, SupabaseClient } from "@supabase/supabase-js";
import { config, realtimeProjectUrl } from "./config.ts";
import { accessToken } from "./live.ts";

let client: SupabaseClient | null = null;
/** Counts sign-outs: a join asked for before one never starts after it. */
let epoch = 0;

async function presenceClient(): Promise<SupabaseClient> {
  const cfg = config.get();
  if (!cfg) throw new Error("the configuration is not loaded");
  if (!client) {
    // supabase-js is in the transport's chunk, loaded on demand (live.ts), not the first page's.
    const { createClient } = await import("@supabase/supabase-js");
    client ??= createClient(realtimeProjectUrl(cfg), cfg.realtime.anonKey, {
      // The page's token, from memory; supabase-js asks again on its heartbeats.
      accessToken: accessToken,
    });
  }
  // Before the first join, or it goes out with the anon key (environment note, supabase docs).
  await client.realtime.setAuth(await accessToken());
  return client;
}

/** The presence topic of a person. */
export const presenceTopic = (userId: string) => `presence:${userId}`;

/** A channel joined once the client is ready (nothing if stopped first). */
function open(
  userId: string,
  setup: (channel: RealtimeChannel) => void,
  onStatus: (status: string) => void,
): () => void {
  let channel: RealtimeChannel | null = null;
  let stopped = false;
  const since = epoch;
  void presenceClient().then((c) => {
    if (stopped || since !== epoch) return;
    channel = c.channel(presenceTopic(userId), {
      config: { private: true, presence: { key: userId } },
    });
    setup(channel);
    channel.subscribe((status) => onStatus(status));
  }).catch(() => onStatus("CHANNEL_ERROR"));
  return () => {
    stopped = true;
    if (channel) void client?.removeChannel(channel);
  };
}

/**
 * Tracks the signed-in person as online on their own presence channel until the returned
 * function is called (or sign-out). Called once by the app for every signed-in page.
 */
export function trackSelf(me: { id: string; name: string }): () => void {
  let channel: RealtimeChannel | null = null;
  return open(me.id, (c) => {
    channel = c;
    // A presence listener turns presence on for the join (supabase-js).
    c.on("presence", { event: "sync" }, () => {});
  }, (status) => {
    // Tracked again after each (re)join: a new socket starts without it.
    if (status === "SUBSCRIBED") void channel?.track({ name: me.name, at: Date.now() });
  });
}

/** The most presence channels one watcher keeps joined at a time. */
export const MAX_WATCHED = 50;

export interface PresenceWatcher {
  /**
   * Watches these people (at most `MAX_WATCHED`, the first ones): channels are joined for those
   * newly named and left for those no longer named; the others stay as they are.
   */
  watch(userIds: string[]): void;
  /** Leaves every channel. */
  stop(): void;
}

/**
 * Whether people are online, for a set that changes (those a page shows): `onChange` gets the ids
 * online now among those watched, or null while presence is unknown (no channel joined yet, or
 * every one refused or dropped: no WebSocket, or not allowed).
 */
export function presenceWatcher(onChange: (online: Set<string> | null) => void): PresenceWatcher {
  const online = new Set<string>();
  const joined = new Set<string>();
  /** The channel of each person watched (a late callback of a channel left is told by identity). */
  const channels = new Map<string, { leave: () => void }>();
  /**
   * Whether presence works here: a channel joined, and none refused or dropped since while none
   * is joined. While the set changes (a large group scrolled), the newly watched are not joined
   * yet: presence stays known (those not yet joined count as offline) rather than "unavailable".
   */
  let working = false;
  const publish = () => onChange(joined.size || working ? new Set(online) : null);
  const follow = (userId: string) => {
    const entry = { leave: () => {} };
    const current = () => channels.get(userId) === entry;
    channels.set(userId, entry);
    let channel: RealtimeChannel | null = null;
    entry.leave = open(userId, (c) => {
      channel = c;
      c.on("presence", { event: "sync" }, () => {
        if (!current()) return;
        const here = Object.keys(channel!.presenceState()).length > 0;
        if (here) online.add(userId);
        else online.delete(userId);
        publish();
      });
    }, (status) => {
      if (!current()) return;
      if (status === "SUBSCRIBED") {
        joined.add(userId);
        working = true;
      } else {
        joined.delete(userId);
        online.delete(userId);
        if (!joined.size) working = false;
      }
      publish();
    });
  };
  const leave = (userId: string) => {
    channels.get(userId)?.leave();
    channels.delete(userId);
    joined.delete(userId);
    online.delete(userId);
  };
  return {
    watch(userIds) {
      const wanted = new Set(userIds.slice(0, MAX_WATCHED));
      const before = channels.size;
      for (const userId of [...channels.keys()]) if (!wanted.has(userId)) leave(userId);
      const left = before !== channels.size;
      for (const userId of wanted) if (!channels.has(userId)) follow(userId);
      if (left) publish();
    },
    stop() {
      for (const userId of [...channels.keys()]) leave(userId);
    },
  };
}

/** Ends presence (sign-out): every channel left, the socket closed. */
export function stopPresence(): void {
  epoch++;
  const closing = client;
  client = null;
  if (closing) void closing.removeAllChannels().finally(() => closing.realtime.disconnect());
}
