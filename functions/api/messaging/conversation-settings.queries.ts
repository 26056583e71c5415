/** Queries of a conversation's own settings (messaging/conversation-settings.routes.ts). */
import type { Tx } from "../../_shared/db.ts";

export interface MuteJson {
  conversationId: string;
  muted: boolean;
  mutedUntil: string | null;
}

/** The caller's mute of a conversation (`app.conversation_mute`; 404 when not a participant). */
export async function readMute(tx: Tx, conversationId: string): Promise<MuteJson> {
  const [{ result }] = await tx<{ result: MuteJson }[]>`
    select app.conversation_mute(${conversationId}) as result`;
  return result;
}

/**
 * Mutes (until unmuted, or until `mutedUntil`) or unmutes (`muted: false`) a conversation for
 * the caller (`app.set_conversation_mute`); with neither, changes nothing.
 */
export async function setMute(
  tx: Tx,
  conversationId: string,
  input: { muted?: boolean; mutedUntil?: string | null },
): Promise<MuteJson> {
  const [{ result }] = await tx<{ result: MuteJson }[]>`
    select app.set_conversation_mute(
      ${conversationId}, ${input.muted ?? null}, ${
    input.mutedUntil ?? null
  }::timestamptz) as result`;
  return result;
}
