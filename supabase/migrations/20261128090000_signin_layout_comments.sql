/*
 * Sign-in: the account export's comment names its pgTAP file where the per-domain layout put it
 * (tests/account/sql/430-account-export.sql). (app.has_fresh_sign_in's comment, which named a
 * moved file too, is rewritten by the next migration, 20261128090100_signin_live_sessions.sql.)
 * Comment only; nothing else changes.
 */

comment on table app_private.account_export_parts is
  'The one list of the account export''s parts: the document key and the function (user_id uuid) returning jsonb that fills it. A domain adds its row in its migration; tests/account/sql/430-account-export.sql checks that every account_export_* function is listed and that no part holds a secret.';
