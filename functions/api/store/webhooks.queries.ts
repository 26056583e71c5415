/**
 * The webhook's one write (store/webhooks.routes.ts), a server path: the caller is the payment
 * provider, authenticated by the signature, not a user; `app_private` has no grants.
 */
import type { Sql } from "../../_shared/db.ts";
import type { ProviderEvent } from "./payments.ts";

/** Stores a verified event once and queues its job; false when its id was seen before. */
export async function recordProviderEvent(sql: Sql, event: ProviderEvent): Promise<boolean> {
  const [row] = await sql<{ fresh: boolean }[]>`
    select app_private.record_stripe_event(
      ${event.id}, ${event.type}, ${event.livemode}, ${sql.json(event.raw as never)}::jsonb
    ) as fresh`;
  return row.fresh;
}
