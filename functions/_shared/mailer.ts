/**
 * Outgoing mail. SMTP through nodemailer when `AGORA_SMTP_URL` is set; in local mode every mail
 * sent is also kept in `dev.mail` for `GET /_dev/mail` (without SMTP, that insert is the send).
 * With neither, mail is refused loudly rather than dropped silently.
 *
 * Never twice: a mail can carry a stable `Message-ID` (a notification delivery's comes from its
 * row id), so every attempt at one message carries the same id, and the dev mailbox keeps one row
 * per id. A failure says whether sending again is safe (`MailError.outcome`):
 *
 * - `retry`: the message was not handed over: no connection, the greeting, EHLO, AUTH, MAIL FROM,
 *   RCPT TO or DATA refused with 4xx, or the connection broke before the end of the data; also a
 *   4xx answer to the data's end (the server said it did not take it).
 * - `failed`: the server refused this message for good: 5xx to MAIL FROM, RCPT TO, DATA or the
 *   data's end.
 * - `outcome_unknown`: the whole message and its terminator (`<CRLF>.<CRLF>`) were written to the
 *   connection, and then no answer came (the connection broke, or timed out): the server may have
 *   taken it, so it is not sent again.
 *
 * When the terminator was written is not something nodemailer 7.0.10 reports per message; its
 * SMTP connection logs it (an `info` entry with `tnx: "message"` and the byte counts, when its
 * data stream, which ends with the terminator, has been piped to the socket). Each send gets its
 * own transport (nodemailer opens a connection per message anyway without `pool`) with a logger
 * that notes that entry. tests/notifications/delivery-faults fails if that stops working: a
 * connection broken after the data must come back as `outcome_unknown`.
 */
import nodemailer from "nodemailer";
import type { Sql } from "./db.ts";
import type { Logger } from "./logger.ts";

export interface Mail {
  to: string;
  subject: string;
  text: string;
  links: string[];
  /**
   * The `Message-ID` (`<id@domain>`), the same for every attempt at one message; without it,
   * nodemailer makes a fresh one (and the dev mailbox keeps every such mail).
   */
  messageId?: string;
}

/** What a failed send means for sending again (see the module comment). */
export type MailOutcome = "retry" | "failed" | "outcome_unknown";

export class MailError extends Error {
  constructor(
    message: string,
    readonly outcome: MailOutcome,
    /** nodemailer's error code (ECONNECTION, EENVELOPE, EMESSAGE...) or the SMTP reply code. */
    readonly code: string,
  ) {
    super(message);
    this.name = "MailError";
  }
}

export interface Mailer {
  /** Sends one mail; throws a `MailError` when it was not sent (or may not have been). */
  send(mail: Mail): Promise<void>;
}

interface NodemailerError {
  code?: string;
  command?: string;
  responseCode?: number;
  message?: string;
}

/** Commands whose refusal is about this message, not the session. */
const MESSAGE_COMMANDS = new Set(["MAIL FROM", "RCPT TO", "DATA"]);

/** Maps what nodemailer threw to a `MailError` (see the module comment). */
export function classifyMailError(err: unknown, handedOver: boolean): MailError {
  const e = (err ?? {}) as NodemailerError;
  const message = String(e.message ?? err).slice(0, 500);
  const reply = typeof e.responseCode === "number" ? e.responseCode : null;
  if (reply !== null && reply >= 400 && reply < 600 && MESSAGE_COMMANDS.has(e.command ?? "")) {
    // The server answered: it did not take the message, whatever was written before.
    return new MailError(message, reply >= 500 ? "failed" : "retry", String(reply));
  }
  if (handedOver) return new MailError(message, "outcome_unknown", e.code ?? "ECONNECTION");
  return new MailError(message, "retry", e.code ?? (reply !== null ? String(reply) : "error"));
}

export function createMailer(
  opts: { smtpUrl?: string; from: string; localMode: boolean; sql: Sql; log?: Logger },
): Mailer {
  const { smtpUrl } = opts;
  if (!smtpUrl && !opts.localMode) {
    throw new Error("no way to send mail: set AGORA_SMTP_URL (or AGORA_LOCAL_MODE=true)");
  }
  // The URL's options as nodemailer reads them (host, port, secure, auth, its query options),
  // once: a transport made from a URL takes no other option, so each send's transport is made
  // from these plus its logger.
  const smtpOptions = smtpUrl
    ? (nodemailer.createTransport(smtpUrl) as unknown as { options: Record<string, unknown> })
      .options
    : null;
  const record = async (mail: Mail) => {
    await opts.sql`
      insert into dev.mail (to_address, subject, text_body, links, message_id)
      values (${mail.to}, ${mail.subject}, ${mail.text}, ${mail.links}, ${mail.messageId ?? null})
      on conflict (message_id) do nothing`;
  };
  return {
    async send(mail) {
      if (!smtpOptions) {
        // Local mode without SMTP: the mailbox is the delivery.
        try {
          await record(mail);
        } catch (err) {
          throw new MailError(String(err).slice(0, 500), "retry", "dev_mailbox");
        }
        return;
      }
      let handedOver = false;
      const quiet = () => {};
      const transport = nodemailer.createTransport(
        {
          ...smtpOptions,
          logger: {
            trace: quiet,
            debug: quiet,
            info(entry: { tnx?: string; outByteCount?: number } | undefined) {
              if (entry?.tnx === "message" && entry.outByteCount !== undefined) handedOver = true;
            },
            warn: quiet,
            error: quiet,
            fatal: quiet,
          },
        } as Parameters<typeof nodemailer.createTransport>[0],
      );
      try {
        await transport.sendMail({
          from: opts.from,
          to: mail.to,
          subject: mail.subject,
          text: mail.text,
          ...(mail.messageId ? { messageId: mail.messageId } : {}),
        });
      } catch (err) {
        throw classifyMailError(err, handedOver);
      } finally {
        transport.close();
      }
      if (opts.localMode) {
        // Sent: a failure to keep the copy must not make the caller send it again.
        await record(mail).catch((err) =>
          opts.log?.("warn", "sent mail not kept in dev.mail", { error: String(err) })
        );
      }
    },
  };
}
