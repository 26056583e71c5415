/**
 * Presence: who has a conversation open, through supabase-js Presence on the conversation's
 * private channel (`conversation:<id>`), as hosted Supabase Realtime does it.
 *
 * A supabase-js client of its own: the transport's client keeps one channel per topic for its
 * broadcasts and leaves it when it falls back to SSE, while presence lives only on the socket.
 * When the WebSocket cannot connect, presence is simply unknown (the page says so).
 */
import type { RealtimeChannel, SupabaseClient } from "@supabase/supabase-js";
import { config, realtimeProjectUrl } from "./config.ts";
import { accessToken } from "./live.ts";

let client: SupabaseClient | null = null;

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

export interface PresenceHandle {
  leave(): void;
}

export interface Present {
  userId: string;
  name: string;
}

/**
 * Tracks the caller on the conversation's channel; `onChange` gets everyone present (null while
 * the channel is not joined).
 */
export function joinPresence(
  conversationId: string,
  me: Present,
  onChange: (present: Present[] | null) => void,
): PresenceHandle {
  let channel: RealtimeChannel | null = null;
  let left = false;
  void presenceClient().then((c) => {
    if (left) return;
    channel = c.channel(`conversation:${conversationId}`, {
      config: { private: true, presence: { key: me.userId } },
    });
    const publish = () => {
      const state = channel!.presenceState<Present>();
      const seen = new Map<string, Present>();
      for (const [key, metas] of Object.entries(state)) {
        const meta = metas[0];
        seen.set(key, { userId: key, name: meta?.name ?? "" });
      }
      onChange([...seen.values()]);
    };
    channel
      .on("presence", { event: "sync" }, publish)
      .subscribe((status) => {
        if (status === "SUBSCRIBED") void channel!.track({ name: me.name });
        else onChange(null);
      });
  }).catch(() => onChange(null));
  return {
    leave() {
      left = true;
      if (channel) void client?.removeChannel(channel);
    },
  };
}

export function stopPresence(): void {
  const closing = client;
  client = null;
  if (closing) void closing.removeAllChannels().finally(() => closing.realtime.disconnect());
}
