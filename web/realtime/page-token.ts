/**
 * The page's access token in memory (docs/sessions.md, "Access token for a browser page"): one
 * request at a time to fetch it, the same token handed out while more than half of its lifetime
 * (at most two minutes) is left, a new one after. Tokens for Realtime live two minutes
 * (`AGORA_REALTIME_TOKEN_TTL`), so the page renews about every minute, and a session signed out
 * elsewhere loses its hosted Realtime channels when the last token expires.
 */

/** What `POST /api/auth/token` answers. */
export interface PageTokenAnswer {
  accessToken: string;
  /** ISO time. */
  expiresAt: string;
}

/** A token with less than this left is never handed out again, whatever its lifetime. */
export const MIN_LEFT_MS = 120_000;

export function createPageToken(
  fetchToken: () => Promise<PageTokenAnswer>,
  now: () => number = Date.now,
): { get(): Promise<string>; clear(): void } {
  let token: { value: string; expiresAt: number; keepUntil: number } | null = null;
  let asking: Promise<string> | null = null;
  return {
    get() {
      if (token && now() < token.keepUntil) return Promise.resolve(token.value);
      asking ??= fetchToken()
        .then((answer) => {
          const expiresAt = Date.parse(answer.expiresAt);
          const fetchedAt = now();
          // Half the lifetime left, or two minutes, whichever is less.
          const keepLeft = Math.min(MIN_LEFT_MS, (expiresAt - fetchedAt) / 2);
          token = { value: answer.accessToken, expiresAt, keepUntil: expiresAt - keepLeft };
          return answer.accessToken;
        })
        .finally(() => asking = null);
      return asking;
    },
    clear() {
      token = null;
    },
  };
}
