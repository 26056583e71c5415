/**
 * Outgoing mail. SMTP through nodemailer when `AGORA_SMTP_URL` is set; in local mode every mail
 * is also kept in `dev.mail` for `GET /_dev/mail`. With neither, mail is refused loudly rather
 * than dropped silently.
 */
import nodemailer from "nodemailer";
import type { Sql } from "./db.ts";

export interface Mail {
  to: string;
  subject: string;
  text: string;
  links: string[];
}

export interface Mailer {
  send(mail: Mail): Promise<void>;
}

export function createMailer(
  opts: { smtpUrl?: string; from: string; localMode: boolean; sql: Sql },
): Mailer {
  const transport = opts.smtpUrl ? nodemailer.createTransport(opts.smtpUrl) : null;
  if (!transport && !opts.localMode) {
    throw new Error("no way to send mail: set AGORA_SMTP_URL (or AGORA_LOCAL_MODE=true)");
  }
  return {
    async send(mail) {
      if (opts.localMode) {
        await opts.sql`
          insert into dev.mail (to_address, subject, text_body, links)
          values (${mail.to}, ${mail.subject}, ${mail.text}, ${mail.links})`;
      }
      if (transport) {
        await transport.sendMail({
          from: opts.from,
          to: mail.to,
          subject: mail.subject,
          text: mail.text,
        });
      }
    },
  };
}
