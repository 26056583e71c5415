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
