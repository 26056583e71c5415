/**
 * /api/admin: every admin resource, behind one gate. The gate is declared here, on the router
 * all of them are mounted on, so a new admin resource (a file in this folder, mounted below) is
 * ADMIN only without a line elsewhere: no session is 401, a user below ADMIN is 403 and recorded
 * as `admin.access_denied`, an ADMIN is rate-limited per user (middleware/roles.ts). It covers
 * every path under /api/admin, unknown ones too.
 */
import { router } from "../../openapi.ts";
import { adminGate } from "../../middleware/roles.ts";
import { adminUsers } from "./users.ts";
import { adminConfig } from "./config.ts";
import { adminAnalytics } from "./analytics.ts";
import { adminMonitoring } from "./monitoring.ts";
import { adminVendors } from "./vendors.ts";
import { adminSettlements } from "./settlements.ts";

export const admin = router();

admin.use("*", adminGate());

admin.route("/users", adminUsers);
admin.route("/config", adminConfig);
admin.route("/analytics", adminAnalytics);
admin.route("/vendors", adminVendors);
admin.route("/settlements", adminSettlements);
admin.route("/", adminMonitoring);
