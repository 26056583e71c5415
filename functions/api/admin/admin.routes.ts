/**
 * /api/admin: every admin resource, behind one gate. The gate is declared here, on the router
 * all of them are mounted on, so a new admin resource (a file in this folder, mounted below) is
 * ADMIN only without a line elsewhere: no session is 401, a user below ADMIN is 403 and recorded
 * as `admin.access_denied`, an ADMIN is rate-limited per user (core/middleware/roles.ts). It covers
 * every path under /api/admin, unknown ones too.
 */
import { router } from "../core/openapi.ts";
import { adminGate } from "../core/middleware/roles.ts";
import { adminUsers } from "./users.routes.ts";
import { adminConfig } from "./config.routes.ts";
import { adminAnalytics } from "./analytics.routes.ts";
import { adminMonitoring } from "./monitoring.routes.ts";
import { adminVendors } from "./vendors.routes.ts";
import { adminSettlements } from "./settlements.routes.ts";
import { adminReports } from "./reports.routes.ts";

export const admin = router();

admin.use("*", adminGate());

admin.route("/users", adminUsers);
admin.route("/config", adminConfig);
admin.route("/analytics", adminAnalytics);
admin.route("/vendors", adminVendors);
admin.route("/settlements", adminSettlements);
admin.route("/reports", adminReports);
admin.route("/", adminMonitoring);
