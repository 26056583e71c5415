/** Queries of the block routes (people/blocks.routes.ts), run as the caller. */
import type { Tx } from "../../_shared/db.ts";
import { pageLimit, slicePage } from "../core/paging.ts";

/**
 * Blocks (`block`) or unblocks a person (`app.set_block`: an active user, never oneself;
 * idempotent both ways). Nothing reaches the blocked person.
 */
export async function setBlock(tx: Tx, userId: string, block: boolean) {
  const [{ result }] = await tx<{ result: { userId: string; blocked: boolean } }[]>`
    select app.set_block(${userId}, ${block}) as result`;
  return result;
}

/** A page of the people the caller blocks (`app.list_blocked`), newest block first. */
export async function listBlocked(
  tx: Tx,
  opts: { after: [string, string] | null; limit: number },
) {
  const [afterAt, afterId] = opts.after ?? [null, null];
  const rows = await tx<
    { id: string; name: string; image: string | null; blocked_at: string }[]
  >`
    select id, name, image, blocked_at
    from app.list_blocked(${afterAt}::timestamptz, ${afterId}::uuid, ${pageLimit(opts.limit)})`;
  const page = slicePage(rows, opts.limit, (last) => [last.blocked_at, last.id]);
  return {
    items: page.rows.map((r) => ({ id: r.id, name: r.name, image: r.image })),
    nextCursor: page.nextCursor,
  };
}
