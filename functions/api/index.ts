/** The `api` edge function (hosted Supabase): settings from the function's secrets. */
import { createApp } from "./app.ts";
import { createDeps } from "./deps.ts";
import { loadSettings } from "../_shared/settings.ts";
import { guardDriverFaults } from "../_shared/db.ts";

const deps = createDeps(loadSettings(Deno.env.toObject()));
guardDriverFaults(deps.log);
const app = createApp(deps);

Deno.serve((request, info) => app.fetch(request, info));
