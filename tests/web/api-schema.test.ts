/**
 * The web client's types (web/app/lib/api-schema.d.ts) are the API's OpenAPI document as
 * openapi-typescript renders it today: a route, a field or a status changed without regenerating
 * them fails here, as a migration without its readable schema fails `npm test`.
 */
import assert from "node:assert/strict";
import { test } from "../support/helpers.ts";
import { API_SCHEMA_FILE, generateApiSchema } from "../../web/api-schema.ts";

test("[web] the committed client types match the OpenAPI document (deno run -A web/api-schema.ts)", async () => {
  const committed = await Deno.readTextFile(API_SCHEMA_FILE);
  const generated = await generateApiSchema();
  if (committed !== generated) {
    const a = committed.split("\n");
    const b = generated.split("\n");
    const line = a.findIndex((l, i) => l !== b[i]);
    assert.fail(
      `web/app/lib/api-schema.d.ts is not current: run \`deno run -A web/api-schema.ts\` and ` +
        `commit it. First difference at line ${line + 1}:\n- ${a[line]}\n+ ${b[line]}`,
    );
  }
});

/**
 * Every call to the API goes through the typed client (`client.GET("/api/...")`): fetch is
 * called only by the client itself, by the files module (a download saved as a file, an upload
 * with progress) and for the local stack's `/_dev` stand-ins, which are not in the document.
 */
test("[web] the web client calls the API only through the typed client", async () => {
  const allowed = new Set(["lib/client.ts", "lib/files.ts"]);
  const found: string[] = [];
  const walk = async (dir: string, rel = ""): Promise<void> => {
    for await (const entry of Deno.readDir(dir)) {
      const path = `${dir}/${entry.name}`;
      const name = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory) await walk(path, name);
      else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith(".d.ts") && !allowed.has(name)) {
        const lines = (await Deno.readTextFile(path)).split("\n");
        lines.forEach((line, i) => {
          // A fetch of anything but a `/_dev` stand-in (named within a line or two of it).
          const near = lines.slice(Math.max(0, i - 2), i + 2).join("\n");
          if (/\bfetch\(/.test(line) && !/_dev|devMail/.test(near)) {
            found.push(`web/app/${name}:${i + 1}: ${line.trim()}`);
          }
          if (/lib\/api\.ts"|\bapi\.(get|post|put|delete)\b/.test(line)) {
            found.push(`web/app/${name}:${i + 1}: ${line.trim()}`);
          }
        });
      }
    }
  };
  await walk(new URL("../../web/app", import.meta.url).pathname);
  assert.deepEqual(found, [], "untyped API calls (use client from lib/client.ts)");
});
