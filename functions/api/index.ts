/** The `api` edge function (hosted Supabase): settings from the function's secrets. */
import { createApp } from "./app.ts";
import { createDeps } from "./deps.ts";
import { loadSettings } from "../_shared/settings.ts";

const app = createApp(createDeps(loadSettings(Deno.env.toObject())));

Deno.serve((request, info) => app.fetch(request, info));
