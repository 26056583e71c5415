/**
 * One message: sender, time, reply quote, text (links, bold, italic and code, rendered safely:
 * rich-text.ts) or tombstone, attachments, reactions (toggle one's own, add from a small picker),
 * its thread's reply count, actions, read marks. Mentions are highlighted in the text (`@Name` of
 * each mentioned participant; the caller's own stand out); a message from someone the caller
 * blocks is marked, and any other's offers Block and Report.
 */
import type { ComponentChildren } from "preact";
import { useEffect, useId, useRef, useState } from "preact/hooks";
import { apiOrigin } from "../../lib/client.ts";
import { config } from "../../lib/config.ts";
import { useStore } from "../../lib/store.ts";
import { bytes, clockTime, fullTime } from "../../lib/format.ts";
import { COMMON_EMOJI, type Message } from "./types.ts";
import { RichText } from "./rich-text.ts";

/**
 * Whether one's own message may still be edited: until `createdAt` plus the configuration's
 * `limits.messageEditWindowMinutes` (the server refuses later edits with 422). Re-renders when
 * the window closes while the page is open. Without the limit (an older server) Edit stays.
 */
function useEditWindow(createdAt: string, own: boolean): boolean {
  const minutes = useStore(config)?.limits?.messageEditWindowMinutes;
  const until = minutes === undefined ? Infinity : Date.parse(createdAt) + minutes * 60_000;
  const [, rerender] = useState(0);
  const open = own && Date.now() < until;
  useEffect(() => {
    if (!open || until === Infinity) return;
    const timer = setTimeout(() => rerender((n) => n + 1), until - Date.now() + 50);
    return () => clearTimeout(timer);
  }, [open, until]);
  return open;
}

export function MessageItem(
  {
    message: m,
    mine,
    sender,
    replied,
    repliedSender,
    seenBy,
    editing,
    canDelete,
    onReply,
    onEdit,
    onCancelEdit,
    onSaveEdit,
    onDelete,
    onReact,
    onOpenThread,
    onReport,
    onBlock,
    meId,
    nameOf,
    senderBlocked = false,
  }: {
    message: Message;
    mine: boolean;
    sender: string;
    /** The message replied to: undefined when none, null when it is not loaded. */
    replied: Message | null | undefined;
    repliedSender: (userId: string) => string;
    seenBy?: string[];
    editing: boolean;
    canDelete: boolean;
    onReply: () => void;
    onEdit: () => void;
    onCancelEdit: () => void;
    onSaveEdit: (content: string) => Promise<void>;
    onDelete: () => void;
    onReact: (emoji: string, present: boolean) => void;
    /** Opens this message's thread; absent inside a thread (a reply has no thread of its own). */
    onOpenThread?: () => void;
    /** Report the message to the moderators (not offered for one's own). */
    onReport?: () => void;
    /** Block the sender (not offered for one's own, nor for someone already blocked). */
    onBlock?: () => void;
    /** The caller's id: their own mentions stand out. */
    meId?: string;
    /** A participant's name, for the mentions. */
    nameOf?: (userId: string) => string | undefined;
    /** The caller blocks the sender. */
    senderBlocked?: boolean;
  },
) {
  const deleted = m.deletedAt !== null;
  const mentionsMe = !deleted && meId !== undefined && (m.mentions ?? []).includes(meId);
  const [picking, setPicking] = useState(false);
  const editable = useEditWindow(m.createdAt, mine && !deleted);
  return (
    <li
      class={`msg${mine ? " mine" : ""}${deleted ? " deleted" : ""}${
        mentionsMe ? " mentions-me" : ""
      }${senderBlocked ? " from-blocked" : ""}`}
      id={`msg-${m.id}`}
      data-message-id={m.id}
      data-seq={m.seq}
    >
      <div class="msg-head">
        <span class="sender">{mine ? "You" : sender}</span>
        <time dateTime={m.createdAt} title={fullTime(m.createdAt)}>{clockTime(m.createdAt)}</time>
        {senderBlocked && (
          <span class="blocked-tag" data-testid="sender-blocked">(you blocked this person)</span>
        )}
        {m.editedAt && !deleted && (
          <span class="edited" title={`Edited ${fullTime(m.editedAt)}`}>(edited)</span>
        )}
      </div>
      {m.replyToId && (
        <a class="reply-quote" href={`#msg-${m.replyToId}`}>
          <span class="visually-hidden">In reply to</span>
          {replied
            ? (
              <>
                <strong>{replied.senderId ? repliedSender(replied.senderId) : "Someone"}</strong>
                {": "}
                {replied.deletedAt ? "(deleted)" : replied.content.slice(0, 140) ||
                  `${replied.attachments.length} attachment(s)`}
              </>
            )
            : "an earlier message"}
        </a>
      )}
      {deleted
        ? <p class="tombstone">This message was deleted.</p>
        : editing
        ? <EditForm initial={m.content} onSave={onSaveEdit} onCancel={onCancelEdit} />
        : m.content && (
          <p class="content">
            <RichText
              text={m.content}
              plain={(text) => withMentions(text, m.mentions ?? [], nameOf, meId)}
            />
          </p>
        )}
      {!deleted && m.attachments.length > 0 && (
        <ul class="attachments">
          {m.attachments.map((a) => {
            const href = `${apiOrigin}${a.url}`;
            return (
              <li key={a.id}>
                {a.contentType.startsWith("image/")
                  ? (
                    <a href={href} class="image-link" download={a.name}>
                      <img src={href} alt={a.name} loading="lazy" />
                    </a>
                  )
                  : (
                    <a href={href} download={a.name} class="file-link">
                      {a.name} <span class="muted">({bytes(a.size)})</span>
                    </a>
                  )}
              </li>
            );
          })}
        </ul>
      )}
      {!deleted && (m.reactions.length > 0 || picking) && (
        <div class="reactions" role="group" aria-label="Reactions">
          {m.reactions.map((r) => (
            <button
              key={r.emoji}
              type="button"
              class={`reaction${r.me ? " me" : ""}`}
              aria-pressed={r.me}
              aria-label={`${r.emoji} ${r.count}${r.me ? ", yours" : ""}`}
              data-emoji={r.emoji}
              onClick={() => onReact(r.emoji, !r.me)}
            >
              <span aria-hidden="true">{r.emoji}</span> <span class="count">{r.count}</span>
            </button>
          ))}
          {picking && (
            <span class="emoji-picker" role="group" aria-label="Pick a reaction">
              {COMMON_EMOJI.map((e) => (
                <button
                  key={e}
                  type="button"
                  class="link"
                  aria-label={`React with ${e}`}
                  onClick={() => {
                    setPicking(false);
                    const mine = m.reactions.find((r) => r.emoji === e)?.me ?? false;
                    if (!mine) {
                      onReact(e, true);
                    }
                  }}
                >
                  {e}
                </button>
              ))}
            </span>
          )}
        </div>
      )}
      {onOpenThread && m.thread && (
        <button type="button" class="link thread-count" onClick={onOpenThread}>
          {m.thread.replyCount} {m.thread.replyCount === 1 ? "reply" : "replies"}
        </button>
      )}
      {!deleted && !editing && (
        <div class="msg-actions">
          <button
            type="button"
            class="link"
            aria-expanded={picking}
            onClick={() => setPicking(!picking)}
            aria-label="React with an emoji"
          >
            React
          </button>
          {onOpenThread && (
            <button type="button" class="link" onClick={onOpenThread}>
              Reply in thread
            </button>
          )}
          <button type="button" class="link" onClick={onReply} aria-label={`Reply to ${sender}`}>
            Reply
          </button>
          {mine && editable && (
            <button type="button" class="link" onClick={onEdit} aria-label="Edit your message">
              Edit
            </button>
          )}
          {canDelete && (
            <button
              type="button"
              class="link"
              onClick={onDelete}
              aria-label={mine ? "Delete your message" : `Delete ${sender}'s message`}
            >
              Delete
            </button>
          )}
          {onBlock && !mine && !senderBlocked && m.senderId && (
            <button
              type="button"
              class="link"
              onClick={onBlock}
              aria-label={`Block ${sender}`}
            >
              Block
            </button>
          )}
          {onReport && !mine && (
            <button
              type="button"
              class="link"
              onClick={onReport}
              aria-label={`Report ${sender}'s message`}
            >
              Report
            </button>
          )}
        </div>
      )}
      {seenBy && seenBy.length > 0 && (
        <p class="seen-by" data-testid="seen-by">Seen by {seenBy.join(", ")}</p>
      )}
    </li>
  );
}

/**
 * The text with each mentioned participant's `@Name` wrapped in <mark class="mention"> (the
 * caller's own with `me`): text nodes only, never HTML.
 */
function withMentions(
  content: string,
  mentions: string[],
  nameOf: ((userId: string) => string | undefined) | undefined,
  meId: string | undefined,
): ComponentChildren {
  const names = new Map<string, string>();
  for (const id of mentions) {
    const name = nameOf?.(id);
    if (name) names.set(`@${name}`, id);
  }
  if (!names.size) return content;
  const escaped = [...names.keys()].sort((a, b) => b.length - a.length)
    .map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  const parts = content.split(new RegExp(`(${escaped.join("|")})`, "g"));
  return parts.map((part, i) => {
    const id = names.get(part);
    if (i % 2 === 0 || !id) return part;
    return (
      <mark key={i} class={`mention${id === meId ? " me" : ""}`} data-user-id={id}>{part}</mark>
    );
  });
}

function EditForm(
  { initial, onSave, onCancel }: {
    initial: string;
    onSave: (content: string) => Promise<void>;
    onCancel: () => void;
  },
) {
  const id = useId();
  const [text, setText] = useState(initial);
  const [busy, setBusy] = useState(false);
  const ref = useRef<HTMLTextAreaElement>(null);
  useEffect(() => ref.current?.focus(), []);
  return (
    <form
      class="edit-form"
      onSubmit={async (e) => {
        e.preventDefault();
        if (!text.trim()) return;
        setBusy(true);
        await onSave(text.trim()).finally(() => setBusy(false));
      }}
      onKeyDown={(e) => e.key === "Escape" && onCancel()}
    >
      <label for={id} class="visually-hidden">Edit the message</label>
      <textarea id={id} ref={ref} value={text} onInput={(e) => setText(e.currentTarget.value)} />
      <div class="edit-actions">
        <button type="button" class="secondary" onClick={onCancel}>Cancel</button>
        <button type="submit" disabled={busy || !text.trim()}>Save</button>
      </div>
    </form>
  );
}
