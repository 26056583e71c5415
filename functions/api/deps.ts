/**
 * Builds the app's dependencies from settings. The hosted function and the local stack both
 * call this; tests call it with their own settings.
 */
import type { Deps } from "./core/context.ts";
import { createAccessLog } from "../_shared/access-log.ts";
import { hmacSigner } from "../_shared/crypto.ts";
import { createListener, createPool } from "../_shared/db.ts";
import { createTokenIssuer } from "../_shared/jwt.ts";
import { createLogger } from "../_shared/logger.ts";
import { createMailer } from "../_shared/mailer.ts";
import { createPushSender } from "../_shared/push.ts";
import { createSecurityRecorder } from "../_shared/security-events.ts";
import type { Settings } from "../_shared/settings.ts";
import { createStorage } from "../_shared/storage-factory.ts";
import { createEventHub } from "./realtime/hub.ts";
import { createConfigCache } from "./core/config-store.ts";
import { createSessionLookup } from "./auth/session-lookup.ts";
import { createStripeProvider } from "./store/payments.ts";
import { createDevProvider } from "./store/dev-provider.ts";
import { createChainAccess } from "./wallet/chain.ts";
import { keyringFromSettings } from "./wallet/keys.ts";

/**
 * Session check queries running at once; the checks that arrive meanwhile share the next query
 * (auth/session-lookup.ts), sent once the thread has handled what was ready. With one, every
 * request in hand waited for the running query's answer while the thread sat idle (about a fifth
 * of the time under `npm run bench -- auth`); with three the next batch goes beside it, about 10
 * sessions a query instead of 14, and 7% more session requests per second (12 alternating rounds
 * of 4 s, 11 won; 2, 4 and 10 measured the same as 3 within noise). Each takes a pool connection.
 */
const SESSION_CHECKS_IN_FLIGHT = 3;

export function createDeps(settings: Settings): Deps {
  // Through a transaction-mode pooler, no named prepared statements (db.ts, `createPool`).
  const prepare = settings.dbPoolMode === "session";
  const sql = createPool(settings.databaseUrl, settings.dbPoolSize, { prepare });
  // LISTEN needs a session of its own: one connection, at the session URL.
  const listener = createListener(settings.sessionDatabaseUrl);
  const log = createLogger(settings.logLevel);
  return {
    settings,
    sql,
    listener,
    log,
    tokens: createTokenIssuer(
      settings.jwtSecret,
      settings.accessTokenTtlSeconds,
      `${settings.siteUrl}/api/auth`,
      settings.jwtSigningKeys,
    ),
    mailer: createMailer({
      smtpUrl: settings.smtpUrl,
      from: settings.mailFrom,
      localMode: settings.localMode,
      sql,
      log,
    }),
    security: createSecurityRecorder(sql, log),
    // Its own connection, so a batch never holds up the app's queries.
    accessLog: createAccessLog(createPool(settings.databaseUrl, 1, { prepare }), log),
    signCsrf: hmacSigner(settings.csrfSecret),
    signRefresh: hmacSigner(settings.refreshSecret),
    storage: createStorage(settings),
    hub: createEventHub(sql, listener, log),
    config: createConfigCache(sql),
    sessions: createSessionLookup(sql, SESSION_CHECKS_IN_FLIGHT),
    payments: settings.stripe.secretKey
      ? createStripeProvider(settings)
      : createDevProvider(sql, { jwtSecret: settings.jwtSecret, siteUrl: settings.siteUrl }),
    chain: createChainAccess(settings.rpcUrl),
    walletKeys: keyringFromSettings(settings),
    push: createPushSender(settings.fcm),
  };
}

/**
 * Stops live delivery, flushes (and closes) the access log, closes push, the session connection
 * and the pool.
 */
export async function closeDeps(deps: Deps): Promise<void> {
  await deps.hub.close();
  await deps.listener.end({ timeout: 5 });
  await deps.push?.close();
  await deps.accessLog.close();
  await deps.sql.end({ timeout: 5 });
}
