/*
 * Sign-in: two comments name the files of the per-domain layout (the API's fresh sign-in check is
 * functions/api/core/middleware/freshness.ts, the export's pgTAP file
 * tests/account/sql/430-account-export.sql). Comments only; nothing else changes.
 */

comment on table app_private.account_export_parts is
  'The one list of the account export''s parts: the document key and the function (user_id uuid) returning jsonb that fills it. A domain adds its row in its migration; tests/account/sql/430-account-export.sql checks that every account_export_* function is listed and that no part holds a secret.';

comment on function app.has_fresh_sign_in() is
  'Whether the caller''s session (the session_id claim) is live and was opened by a sign-in within security.freshSignInSeconds: what deleting the account and exporting a wallet key need. The API checks the same first (functions/api/core/middleware/freshness.ts); this is the database''s own check. security definer: it reads the caller''s session row and the configuration.';
