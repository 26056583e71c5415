/** Queries of /api/attachments (messaging/attachments.routes.ts), run as the caller (RLS decides). */
import type { Tx } from "../../_shared/db.ts";

/** The configured largest upload (`limits.attachmentMaxBytes`, default filled in by SQL). */
export async function attachmentMaxBytes(tx: Tx): Promise<number> {
  const [{ limit }] = await tx<{ limit: number }[]>`
    select app.config_int('limits', 'attachmentMaxBytes') as limit`;
  return limit;
}

/** Records a stored file as the caller's upload, not attached yet; its id. */
export async function insertAttachment(
  tx: Tx,
  a: { uploaderId: string; name: string; contentType: string; size: number; storageKey: string },
): Promise<string> {
  const [row] = await tx<{ id: string }[]>`
    insert into app.attachments (uploader_id, name, content_type, size, storage_key)
    values (${a.uploaderId}, ${a.name}, ${a.contentType}, ${a.size}, ${a.storageKey})
    returning id`;
  return row.id;
}

/** An attachment the caller may see (its uploader, or a participant where it is attached). */
export async function findAttachment(tx: Tx, id: string) {
  const [row] = await tx<{ name: string; content_type: string; storage_key: string }[]>`
    select name, content_type, storage_key from app.attachments where id = ${id}`;
  return row ?? null;
}
