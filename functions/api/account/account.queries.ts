/**
 * Queries of /api/account (account/account.routes.ts), run as the caller. Both are SQL functions that
 * check the caller themselves (docs/account.md): the export is `app.export_account_streamed()`
 * (the document from the parts each domain registers, without its notifications) followed, in
 * the same transaction, by `app.export_account_notifications()` read through a cursor, so the
 * document is written to the response part by part and never built whole (a user with a million
 * notifications went past jsonb's 256 MB limit); `app.delete_account()` erases the account (it
 * checks the fresh sign-in again). The security event of each is written in the same transaction.
 */
import type { Tx } from "../../_shared/db.ts";
import { setClient } from "../core/paging.ts";

type Client = { ip: string | null; userAgent: string | null };

/** Notifications per cursor fetch (and per write to the response) of the export. */
export const EXPORT_ROWS_PER_PART = 1000;

/** The caller's data as one JSON document, built whole (small accounts, tests). */
export async function exportOwnAccount(tx: Tx, client: Client): Promise<Record<string, unknown>> {
  await setClient(tx, client);
  const [row] = await tx<{ document: Record<string, unknown> }[]>`
    select app.export_account() as document`;
  return row.document;
}

/**
 * The caller's export as JSON text, part by part: `head` first (the document without its
 * notifications; it checks the caller and records `account.exported`, so it fails before a byte
 * is written), then `write` for each piece of text, the notifications a cursor batch at a time.
 * `write` may wait (the client reads slowly): at most one batch is held in memory.
 */
export async function streamOwnAccount(
  tx: Tx,
  client: Client,
  head: () => void,
  write: (text: string) => Promise<void>,
): Promise<number> {
  await setClient(tx, client);
  const [row] = await tx<{ document: Record<string, unknown> }[]>`
    select app.export_account_streamed() as document`;
  head();
  const opening = JSON.stringify(row.document);
  await write(`${opening.slice(0, -1)}${opening.length > 2 ? "," : ""}"notifications":[`);
  let count = 0;
  const cursor = tx<{ n: string }[]>`select n from app.export_account_notifications() n`
    .cursor(EXPORT_ROWS_PER_PART);
  for await (const rows of cursor) {
    await write((count ? "," : "") + rows.map((r) => r.n).join(","));
    count += rows.length;
  }
  await write("]}");
  return count;
}

/** Deletes the caller's account; when it was deleted. */
export async function deleteOwnAccount(tx: Tx, client: Client): Promise<Date> {
  await setClient(tx, client);
  const [row] = await tx<{ deleted_at: Date }[]>`select app.delete_account() as deleted_at`;
  return row.deleted_at;
}
