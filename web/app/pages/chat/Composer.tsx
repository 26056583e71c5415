/**
 * Writing a message: text (Enter sends, Shift+Enter is a new line), a reply banner, attachments
 * uploaded at once with their progress (images previewed from the local file), typing signals
 * (POST .../typing: on while typing, off after a pause or on sending; the server throttles too),
 * an `Idempotency-Key` per message, so a retried send never posts twice, and mentions: typing
 * `@` opens a picker of the conversation's participants (arrows and Enter or Tab, or a click);
 * the chosen person's name is written as `@Name` and sent in `mentions` while it stays in the text.
 */
import { client, data, describeError } from "../../lib/client.ts";
import { useEffect, useId, useLayoutEffect, useRef, useState } from "preact/hooks";
import { upload as uploadFile } from "../../lib/files.ts";
import { bytes } from "../../lib/format.ts";
import type { Message, Participant } from "./types.ts";
import type { Schema } from "../../lib/client.ts";

/** Tells the others whether the caller is typing (best effort: a lost signal expires). */
function typing(conversationId: string, isTyping: boolean): Promise<unknown> {
  return client.POST("/api/conversations/{id}/typing", {
    params: { path: { id: conversationId } },
    body: { isTyping },
  }).catch(() => {});
}

interface Upload {
  key: string;
  file: File;
  progress: number;
  preview: string | null;
  attachmentId?: string;
  error?: string;
  abort: AbortController;
}

const TYPING_IDLE_MS = 3_000;
const TYPING_REPEAT_MS = 2_500;

export function Composer(
  {
    conversationId,
    threadId,
    replyTo,
    replyToSender,
    onCancelReply,
    onSent,
    participants = [],
    me,
  }: {
    conversationId: string;
    /** Whom the mention picker offers (the caller is left out). */
    participants?: Participant[];
    me?: string;
    /** Sends into this thread (the thread panel's composer). */
    threadId?: string;
    replyTo: Message | null;
    replyToSender: string;
    onCancelReply: () => void;
    onSent: (m: Message) => void;
  },
) {
  const textId = useId();
  const fileId = useId();
  const [text, setText] = useState("");
  /** The text as last rendered, for a send that ends after the person typed on. */
  const typedNow = useRef(text);
  typedNow.current = text;
  const [uploads, setUploads] = useState<Upload[]>([]);
  const [sending, setSending] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const idempotencyKey = useRef(crypto.randomUUID());
  const textarea = useRef<HTMLTextAreaElement>(null);
  const typingSent = useRef(0);
  const typingIdle = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const pickerId = useId();
  /** People mentioned so far (id to the name written), kept while `@Name` stays in the text. */
  const [mentioned, setMentioned] = useState<Map<string, string>>(new Map());
  /** The open mention picker: what follows the `@`, where the `@` is, the highlighted option. */
  const [picker, setPicker] = useState<{ query: string; at: number; active: number } | null>(
    null,
  );
  /** Where the caret goes once a picked name is in the text. */
  const caretAfterPick = useRef<number | null>(null);
  const candidates = picker
    ? participants.filter((p) =>
      p.userId !== me && p.name.toLowerCase().includes(picker.query.toLowerCase())
    ).slice(0, 8)
    : [];

  /** Opens, narrows or closes the picker from the text before the caret. */
  function lookForMention(value: string, caret: number) {
    const found = /(?:^|\s)@([^\s@]{0,30})$/.exec(value.slice(0, caret));
    setPicker(found ? { query: found[1], at: caret - found[1].length - 1, active: 0 } : null);
  }

  function choose(p: Participant) {
    if (!picker) return;
    const caret = textarea.current?.selectionStart ?? text.length;
    const inserted = `@${p.name} `;
    const next = text.slice(0, picker.at) + inserted + text.slice(caret);
    setText(next);
    setMentioned((m) => new Map(m).set(p.userId, p.name));
    setPicker(null);
    caretAfterPick.current = picker.at + inserted.length;
  }

  // The caret goes after the inserted name in the same render that writes it, before the next
  // key can arrive: set a frame later, a key typed meanwhile went to the end of the text and the
  // rest of the word before it ("@Bob Stone ook at thisl").
  useLayoutEffect(() => {
    const at = caretAfterPick.current;
    if (at === null) return;
    caretAfterPick.current = null;
    textarea.current?.focus();
    textarea.current?.setSelectionRange(at, at);
  });

  useEffect(() => {
    if (replyTo) textarea.current?.focus();
  }, [replyTo]);

  // Stop typing, and free previews, when leaving the conversation.
  useEffect(() => () => {
    clearTimeout(typingIdle.current);
    if (typingSent.current) void typing(conversationId, false);
  }, [conversationId]);
  useEffect(() => () => uploads.forEach((u) => u.preview && URL.revokeObjectURL(u.preview)), []);

  function typed(value: string) {
    setText(value);
    clearTimeout(typingIdle.current);
    if (!value.trim()) return stopTyping();
    if (Date.now() - typingSent.current > TYPING_REPEAT_MS) {
      typingSent.current = Date.now();
      void typing(conversationId, true);
    }
    typingIdle.current = setTimeout(stopTyping, TYPING_IDLE_MS);
  }

  function stopTyping() {
    clearTimeout(typingIdle.current);
    if (!typingSent.current) return;
    typingSent.current = 0;
    void typing(conversationId, false);
  }

  function addFiles(files: FileList | null) {
    for (const file of Array.from(files ?? [])) {
      const upload: Upload = {
        key: crypto.randomUUID(),
        file,
        progress: 0,
        preview: file.type.startsWith("image/") ? URL.createObjectURL(file) : null,
        abort: new AbortController(),
      };
      setUploads((list) => [...list, upload]);
      const change = (patch: Partial<Upload>) =>
        setUploads((list) => list.map((u) => u.key === upload.key ? { ...u, ...patch } : u));
      uploadFile<Schema<"Attachment">>(
        "/api/attachments",
        file,
        (progress) => change({ progress }),
        upload.abort.signal,
      )
        .then((a) => change({ attachmentId: a.id, progress: 1 }))
        .catch((err) => change({ error: describeError(err) }));
    }
  }

  function removeUpload(key: string) {
    setUploads((list) => {
      const gone = list.find((u) => u.key === key);
      gone?.abort.abort();
      if (gone?.preview) URL.revokeObjectURL(gone.preview);
      return list.filter((u) => u.key !== key);
    });
  }

  const pending = uploads.some((u) => !u.attachmentId && !u.error);
  const ready = uploads.filter((u) => u.attachmentId);
  const canSend = !sending && !pending && (text.trim().length > 0 || ready.length > 0);
  const canSendLater = (pending || sending) && (text.trim().length > 0 || uploads.length > 0);
  /**
   * Send pressed while a file was still uploading, or while the message before was on its way:
   * this one goes once every file is in and that one is sent.
   */
  const [sendLater, setSendLater] = useState(false);

  useEffect(() => {
    if (!sendLater || pending || sending) return;
    setSendLater(false);
    // A file that failed is shown with its error: the person decides (remove it, or send).
    if (!uploads.some((u) => u.error)) void send();
  }, [sendLater, pending, sending]);

  async function send(e?: Event) {
    e?.preventDefault();
    if (pending || sending) {
      // The progress bar is full once the bytes are sent, before the server has the file, and on
      // a slow link the message before may still be on its way: an Enter then did nothing, and
      // the message stayed unsent without a word.
      if (canSendLater) setSendLater(true);
      return;
    }
    if (!canSend) return;
    setSending(true);
    setError(null);
    const sentText = text;
    const sentUploads = new Set(uploads.map((u) => u.key));
    try {
      const mentions = [...mentioned].filter(([, name]) => text.includes(`@${name}`))
        .map(([id]) => id);
      const message = data(
        await client.POST("/api/conversations/{id}/messages", {
          params: {
            path: { id: conversationId },
            header: { "idempotency-key": idempotencyKey.current },
          },
          body: {
            // The API needs some text; an attachment-only message says what it carries.
            content: text.trim() || ready.map((u) => u.file.name).join(", "),
            ...(replyTo ? { replyToId: replyTo.id } : {}),
            ...(threadId ? { threadId } : {}),
            ...(ready.length ? { attachmentIds: ready.map((u) => u.attachmentId!) } : {}),
            ...(mentions.length ? { mentions } : {}),
          },
        }),
      );
      idempotencyKey.current = crypto.randomUUID();
      // What was typed or attached while it was on its way stays for the next message.
      if (typedNow.current === sentText) {
        setText("");
        setMentioned(new Map());
        setPicker(null);
        stopTyping();
      }
      for (const u of uploads) if (u.preview) URL.revokeObjectURL(u.preview);
      setUploads((now) => now.filter((u) => !sentUploads.has(u.key)));
      onSent(message);
      textarea.current?.focus();
    } catch (err) {
      setError(describeError(err));
      // Its retry keeps its Idempotency-Key: what was queued behind it waits for the person.
      setSendLater(false);
    } finally {
      setSending(false);
    }
  }

  return (
    <form class="composer" onSubmit={send}>
      {replyTo && (
        <div class="replying" role="status">
          <span>
            Replying to <strong>{replyToSender}</strong>:{" "}
            <span class="muted">{replyTo.content.slice(0, 100)}</span>
          </span>
          <button type="button" class="link" onClick={onCancelReply}>Cancel reply</button>
        </div>
      )}
      {sendLater && (
        <p class="muted small" role="status" data-testid="send-later">
          {pending ? "Sends when the upload finishes…" : "Sends after the message before it…"}
        </p>
      )}
      {uploads.length > 0 && (
        <ul class="uploads" aria-label="Attachments to send">
          {uploads.map((u) => (
            <li key={u.key} class={u.error ? "upload failed" : "upload"}>
              {u.preview
                ? <img src={u.preview} alt="" class="upload-preview" />
                : <span class="upload-icon" aria-hidden="true">📄</span>}
              <span class="upload-text">
                <span class="upload-name">{u.file.name}</span>
                <span class="muted">{bytes(u.file.size)}</span>
                {u.error ? <span class="error">{u.error}</span> : (
                  <progress
                    max={1}
                    value={u.progress}
                    aria-label={`Uploading ${u.file.name}`}
                    data-testid="upload-progress"
                  />
                )}
              </span>
              <button
                type="button"
                class="icon"
                aria-label={`Remove ${u.file.name}`}
                onClick={() => removeUpload(u.key)}
              >
                ×
              </button>
            </li>
          ))}
        </ul>
      )}
      {error && <p class="error" role="alert">{error}</p>}
      {candidates.length > 0 && (
        <ul class="mention-picker" role="listbox" id={pickerId} aria-label="Mention someone">
          {candidates.map((p, i) => (
            <li
              key={p.userId}
              id={`${pickerId}-${p.userId}`}
              role="option"
              aria-selected={i === picker!.active % candidates.length}
              class={i === picker!.active % candidates.length ? "active" : undefined}
              // Before the textarea's blur, which closes the picker.
              onMouseDown={(e) => {
                e.preventDefault();
                choose(p);
              }}
            >
              {p.name}
            </li>
          ))}
        </ul>
      )}
      <div class="composer-row">
        <input
          id={fileId}
          type="file"
          multiple
          class="visually-hidden file-input"
          onChange={(e) => {
            addFiles(e.currentTarget.files);
            e.currentTarget.value = "";
          }}
        />
        <label for={fileId} class="button secondary attach" title="Attach files">
          <svg width="20" height="20" viewBox="0 0 24 24" aria-hidden="true" focusable="false">
            <path
              d="M16.5 6.5 8.6 14.4a2 2 0 0 0 2.8 2.8l8-8a4 4 0 0 0-5.6-5.6l-8.1 8.1a6 6 0 0 0 8.5 8.5l7.1-7.1"
              fill="none"
              stroke="currentColor"
              stroke-width="2"
              stroke-linecap="round"
            />
          </svg>
          <span class="visually-hidden">Attach files</span>
        </label>
        <label for={textId} class="visually-hidden">{threadId ? "Reply" : "Message"}</label>
        <textarea
          id={textId}
          ref={textarea}
          rows={1}
          placeholder={threadId ? "Reply in the thread" : "Write a message"}
          value={text}
          maxLength={10_000}
          aria-autocomplete="list"
          aria-controls={candidates.length ? pickerId : undefined}
          aria-activedescendant={candidates.length
            ? `${pickerId}-${candidates[picker!.active % candidates.length].userId}`
            : undefined}
          onInput={(e) => {
            typed(e.currentTarget.value);
            lookForMention(e.currentTarget.value, e.currentTarget.selectionStart ?? 0);
          }}
          onBlur={() => {
            stopTyping();
            setPicker(null);
          }}
          onKeyDown={(e) => {
            if (picker && candidates.length && !e.isComposing) {
              const n = candidates.length;
              if (e.key === "ArrowDown" || e.key === "ArrowUp") {
                e.preventDefault();
                const step = e.key === "ArrowDown" ? 1 : n - 1;
                setPicker({ ...picker, active: (picker.active + step) % n });
                return;
              }
              if (e.key === "Enter" || e.key === "Tab") {
                e.preventDefault();
                choose(candidates[picker.active % n]);
                return;
              }
              if (e.key === "Escape") {
                e.preventDefault();
                setPicker(null);
                return;
              }
            }
            if (e.key === "Enter" && !e.shiftKey && !e.isComposing) void send(e);
            if (e.key === "Escape" && replyTo) onCancelReply();
          }}
        />
        <button type="submit" disabled={!canSend && !canSendLater}>
          {sending ? "Sending…" : "Send"}
        </button>
      </div>
    </form>
  );
}
