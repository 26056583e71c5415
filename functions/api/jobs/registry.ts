/**
 * Every job kind the app runs. A new kind is a module next to this one (a `defineJob` with its
 * payload schema and an idempotent handler, queue.ts) added to the list below; the drain route
 * and the local worker claim exactly these kinds.
 */
import { JobRegistry } from "../core/job-queue.ts";
import { storageDelete } from "../messaging/jobs.ts";
import { accountEraseAccessLogs } from "../account/jobs.ts";
import { storeJobs } from "../store/jobs.ts";

import { walletBroadcast, walletIndex, walletWatch } from "../wallet/jobs.ts";
import {
  notificationsBatch,
  notificationsBatchChunk,
  notificationsDeliver,
  notificationsDigest,
  notificationsReadMarks,
} from "../notifications/jobs.ts";

export function appJobs(): JobRegistry {
  return new JobRegistry([
    storageDelete,
    accountEraseAccessLogs,
    walletBroadcast,
    walletWatch,
    walletIndex,
    ...storeJobs,
    notificationsDeliver,
    notificationsBatch,
    notificationsBatchChunk,
    notificationsDigest,
    notificationsReadMarks,
  ]);
}
