/**
 * Queries of /api/account (account/account.routes.ts), run as the caller. Both are SQL functions that
 * check the caller themselves (docs/account.md): the export is `app.export_account_streamed()`
 * (the document from the parts each domain registers, without the lists that grow with a
 * person's use) followed, in the same transaction, by each of those lists
 * (`app.export_account_streamed_parts()`: conversations, messages, notifications, orders, the
 * wallet's transactions) read through a cursor over `app.export_account_rows(part)`, so the
 * document is written to the response part by part and never built whole (a user with a million
 * notifications went past jsonb's 256 MB limit; a heavy buyer's orders would too);
 * `app.delete_account()` erases the account (it checks the fresh sign-in again). The security
 * event of each is written in the same transaction.
 */
import type { Tx } from "../../_shared/db.ts";
import { setClient } from "../core/paging.ts";

type Client = { ip: string | null; userAgent: string | null };

/** Elements of a streamed list per cursor fetch (and per write to the response) of the export. */
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
 * streamed lists; it checks the caller and records `account.exported`, so it fails before a byte
 * is written), then `write` for each piece of text, each list a cursor batch at a time. `write`
 * may wait (the client reads slowly): at most one batch is held in memory. Returns how many
 * elements each streamed list had.
 */
export async function streamOwnAccount(
  tx: Tx,
  client: Client,
  head: () => void,
  write: (text: string) => Promise<void>,
): Promise<Record<string, number>> {
  await setClient(tx, client);
  const [row] = await tx<{ document: Record<string, unknown> }[]>`
    select app.export_account_streamed() as document`;
  const streamed = await tx<{ part: string; rows_key: string | null }[]>`
    select part, rows_key from app.export_account_streamed_parts()`;
  head();
  // The document's own keys, then each streamed part: a list, or an object holding one (its
  // other keys from the document, then the list under rows_key).
  const document = { ...row.document };
  const nested = new Map<string, unknown>();
  for (const s of streamed) {
    if (s.rows_key !== null) nested.set(s.part, document[s.part]);
    delete document[s.part];
  }
  const opening = JSON.stringify(document);
  await write(opening.slice(0, -1));
  const counts: Record<string, number> = {};
  for (const s of streamed) {
    const holder = nested.get(s.part);
    if (s.rows_key !== null && (holder === null || holder === undefined)) {
      // An object part the person does not have (no wallet): null, and no list to read.
      await write(`,${JSON.stringify(s.part)}:null`);
      continue;
    }
    if (s.rows_key === null) {
      await write(`,${JSON.stringify(s.part)}:[`);
    } else {
      const object = JSON.stringify(holder);
      await write(
        `,${JSON.stringify(s.part)}:${object.slice(0, -1)}${object.length > 2 ? "," : ""}` +
          `${JSON.stringify(s.rows_key)}:[`,
      );
    }
    let count = 0;
    const cursor = tx<{ r: string }[]>`select r from app.export_account_rows(${s.part}) r`
      .cursor(EXPORT_ROWS_PER_PART);
    for await (const rows of cursor) {
      await write((count ? "," : "") + rows.map((r) => r.r).join(","));
      count += rows.length;
    }
    await write(s.rows_key === null ? "]" : "]}");
    counts[s.part] = count;
  }
  await write("}");
  return counts;
}

/** Deletes the caller's account; when it was deleted. */
export async function deleteOwnAccount(tx: Tx, client: Client): Promise<Date> {
  await setClient(tx, client);
  const [row] = await tx<{ deleted_at: Date }[]>`select app.delete_account() as deleted_at`;
  return row.deleted_at;
}
