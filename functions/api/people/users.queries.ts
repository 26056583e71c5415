/** Queries of /api/users (people/users.routes.ts), run as the caller: the people directory. */
import type { Tx } from "../../_shared/db.ts";
import type { Role } from "../core/context.ts";
import { pageLimit, slicePage } from "../core/paging.ts";

/**
 * A page of the directory (`app.list_people`: active users but the caller, public fields only,
 * by name), after the `[name, id]` of the last row seen.
 */
export async function listPeople(
  tx: Tx,
  opts: { search?: string; after: [string, string] | null; limit: number },
) {
  const [afterName, afterId] = opts.after ?? [null, null];
  const rows = await tx<{ id: string; name: string; image: string | null; role: Role }[]>`
    select id, name, image, role
    from app.list_people(${opts.search || null}, ${afterName}, ${afterId}::uuid, ${
    pageLimit(opts.limit)
  })`;
  const page = slicePage(rows, opts.limit, (last) => [last.name, last.id]);
  return {
    items: page.rows.map((r) => ({ id: r.id, name: r.name, image: r.image, role: r.role })),
    nextCursor: page.nextCursor,
  };
}
