/**
 * `account.erase_access_logs`: the access-log rows of a deleted account lose its id. The deletion
 * (`app.delete_account`) nulls the rows already written, in its own transaction; but every API
 * instance writes its log lines in batches, off the request path (up to 500 ms later), so lines
 * of the account's last requests can still arrive after it. This job, queued by the deletion two
 * minutes ahead (the account's id as dedupe key), nulls those too. Idempotent: nulling twice
 * changes nothing.
 */
import { z } from "zod";
import { defineJob } from "../core/job-queue.ts";
import { serverSql } from "../core/doors.ts";

export const accountEraseAccessLogs = defineJob({
  kind: "account.erase_access_logs",
  payload: z.object({ userId: z.uuid() }),
  async run({ userId }, { deps }) {
    const sql = serverSql(deps, "late access-log erasure");
    await sql`update app.access_logs set user_id = null where user_id = ${userId}`;
  },
});
