/** People as the people pages use them (contract: "People" and "Community": profiles, blocks). */
import { api, query } from "../../lib/api.ts";
import type { Role } from "../../lib/session.ts";

export interface PublicProfile {
  id: string;
  name: string;
  image: string | null;
  bio: string | null;
  role: Role;
}

export interface BlockedPerson {
  id: string;
  name: string;
  image: string | null;
}

export const peopleApi = {
  profile: (id: string) => api.get<PublicProfile>(`/api/users/${id}`, { fresh: true }),
  block: (id: string) => api.put<{ userId: string; blocked: boolean }>(`/api/users/${id}/block`),
  unblock: (id: string) =>
    api.delete<{ userId: string; blocked: boolean }>(`/api/users/${id}/block`),
  blocked: (cursor?: string | null) =>
    api.get<{ items: BlockedPerson[]; nextCursor: string | null }>(
      `/api/users/blocked${query({ limit: 200, cursor })}`,
      { fresh: true },
    ),
};
