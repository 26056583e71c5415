/** The conversation list: name, last message, time, unread count; newest activity first. */
import { Link } from "../../lib/router.tsx";
import { shortTime } from "../../lib/format.ts";
import { Avatar } from "../../components/Avatar.tsx";
import { type Conversation, conversationName } from "./types.ts";

function preview(c: Conversation, me: string): string {
  const last = c.lastMessage;
  if (!last) return "No messages yet";
  const who = last.senderId === me ? "You: " : "";
  if (last.deletedAt) return `${who}(deleted)`;
  if (last.content) return who + last.content;
  return `${who}${last.attachmentCount} attachment${last.attachmentCount === 1 ? "" : "s"}`;
}

export function ConversationList(
  { items, me, openId }: { items: Conversation[] | null; me: string; openId?: string },
) {
  if (items === null) return <p class="muted" role="status">Loading conversations…</p>;
  if (!items.length) {
    return <p class="muted">No conversations yet. Start one with “New conversation”.</p>;
  }
  return (
    <ul class="conversations" data-testid="conversations">
      {items.map((c) => {
        const name = conversationName(c, me);
        const other = c.participants.find((p) => p.userId !== me);
        return (
          <li key={c.id}>
            <Link
              href={`/chat/${c.id}`}
              class={c.unreadCount ? "conversation unread" : "conversation"}
              aria-current={c.id === openId ? "page" : undefined}
              data-conversation-id={c.id}
            >
              <Avatar name={name} image={c.type === "direct" ? other?.image : null} id={c.id} />
              <span class="conversation-text">
                <span class="conversation-top">
                  <span class="conversation-name">{name}</span>
                  <time dateTime={c.updatedAt}>{shortTime(c.updatedAt)}</time>
                </span>
                <span class="conversation-bottom">
                  <span class="conversation-preview">{preview(c, me)}</span>
                  {c.unreadCount > 0 && (
                    <span class="unread-count" data-testid="unread-count">
                      {c.unreadCount}
                      <span class="visually-hidden">unread</span>
                    </span>
                  )}
                </span>
              </span>
            </Link>
          </li>
        );
      })}
    </ul>
  );
}
