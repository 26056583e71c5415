/**
 * `storage.delete`: removes an attachment's file once its row is gone. Enqueued by the trigger on
 * `app.attachments` (`app_private.queue_storage_deletion`, one job per file, the storage key as
 * dedupe key). Idempotent: removing a file that is already gone succeeds (both storages treat a
 * missing key as removed), so a job run twice, or a key queued twice, does no harm.
 */
import { z } from "zod";
import { defineJob } from "../core/job-queue.ts";

export const storageDelete = defineJob({
  kind: "storage.delete",
  payload: z.object({ key: z.string().min(1).max(300) }),
  async run({ key }, { deps }) {
    await deps.storage.remove([key]);
  },
});
