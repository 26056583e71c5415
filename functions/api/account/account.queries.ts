/**
 * Queries of /api/account (account/account.routes.ts), run as the caller. Both are SQL functions that
 * check the caller themselves (docs/account.md): `app.export_account()` composes the export from
 * the parts each domain registers; `app.delete_account()` erases the account (it checks the
 * fresh sign-in again). The security event of each is written in the same transaction.
 */
import type { Tx } from "../../_shared/db.ts";
import { setClient } from "../core/paging.ts";

type Client = { ip: string | null; userAgent: string | null };

/** The caller's data as one JSON document. */
export async function exportOwnAccount(tx: Tx, client: Client): Promise<Record<string, unknown>> {
  await setClient(tx, client);
  const [row] = await tx<{ document: Record<string, unknown> }[]>`
    select app.export_account() as document`;
  return row.document;
}

/** Deletes the caller's account; when it was deleted. */
export async function deleteOwnAccount(tx: Tx, client: Client): Promise<Date> {
  await setClient(tx, client);
  const [row] = await tx<{ deleted_at: Date }[]>`select app.delete_account() as deleted_at`;
  return row.deleted_at;
}
