import assert from "node:assert/strict";
import { expectJson, test, testApp } from "../support/helpers.ts";

const t = testApp();

test("[health] GET /health answers 200 when the database answers", async () => {
  const response = await t.request("GET", "/health");
  assert.match(response.headers.get("content-type") ?? "", /^application\/json/);
  assert.deepEqual(await expectJson(response, 200), { status: "ok" });
});

test("[health] GET /health answers 503 when the database does not", async () => {
  const down = testApp({ AGORA_DB_URL: "postgresql://postgres:x@127.0.0.1:1/postgres" });
  const response = await down.request("GET", "/health");
  assert.equal((await expectJson(response, 503)).error.code, "unavailable");
});
