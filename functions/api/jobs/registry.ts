/**
 * Every job kind the app runs. A new kind is a module next to this one (a `defineJob` with its
 * payload schema and an idempotent handler, queue.ts) added to the list below; the drain route
 * and the local worker claim exactly these kinds.
 */
import { JobRegistry } from "./queue.ts";
import { storageDelete } from "./storage-delete.ts";
import { accountEraseAccessLogs } from "./account-erase-logs.ts";
import { storeJobs } from "./store.ts";

import { walletBroadcast, walletIndex, walletWatch } from "./wallet.ts";
import {
  notificationsBatch,
  notificationsBatchChunk,
  notificationsDeliver,
  notificationsDigest,
} from "./notifications.ts";

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
  ]);
}
