/** The account's API as the account page uses it (contract: "Sign-in providers, sessions and the account"). */
import { api } from "../../lib/api.ts";
import type { ProviderId } from "../signin/providers.tsx";

export interface SessionItem {
  id: string;
  current: boolean;
  provider: string;
  createdAt: string;
  lastSeenAt: string;
  authenticatedAt?: string;
  expiresAt?: string;
  ip: string | null;
  userAgent: string | null;
}

export interface Identity {
  id: string;
  provider: ProviderId;
  address: string | null;
  email: string | null;
  createdAt: string;
  lastUsedAt: string;
}

export const accountApi = {
  sessions: () =>
    api.get<{ items: SessionItem[]; nextCursor: string | null }>(
      "/api/auth/sessions?limit=200",
      { fresh: true },
    ),
  endSession: (id: string) =>
    api.delete<{ id: string; revokedAt: string }>(`/api/auth/sessions/${id}`),
  endOthers: () => api.delete<{ revoked: number }>("/api/auth/sessions?scope=others"),
  identities: () => api.get<{ items: Identity[] }>("/api/auth/identities", { fresh: true }),
  unlink: (id: string) => api.delete<{ id: string }>(`/api/auth/identities/${id}`),
  deleteAccount: () =>
    api.delete<{ deletedAt: string }>("/api/account", { body: { confirm: "delete my account" } }),
};
