/**
 * The domains of the growth benchmark, in the order their seeds run (a later seed may use what an
 * earlier one made: the store's orders use the people, the notifications may name orders).
 */
import type { GrowthDomain } from "./types.ts";
import { growth as admin } from "./admin.ts";
import { growth as messaging } from "./messaging.ts";
import { growth as notifications } from "./notifications.ts";
import { growth as store } from "./store.ts";

export const DOMAINS: GrowthDomain[] = [admin, messaging, notifications, store];
