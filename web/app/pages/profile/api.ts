/** The profile's API as the profile page uses it (contract: "Community", profiles). */
import { api, upload } from "../../lib/api.ts";

export interface Profile {
  id: string;
  name: string;
  image: string | null;
  bio: string | null;
  timeZone: string | null;
  locale: string | null;
}

export type ProfileChange = Partial<
  Pick<Profile, "name" | "bio" | "timeZone" | "locale"> & { imageId: string | null }
>;

export const profileApi = {
  get: () => api.get<Profile>("/api/profile", { fresh: true }),
  update: (change: ProfileChange) => api.put<Profile>("/api/profile", change),
  /** Uploads a picture (POST /api/attachments), then makes it the profile's. */
  async setPicture(file: File, onProgress: (fraction: number) => void): Promise<Profile> {
    const uploaded = await upload<{ id: string }>("/api/attachments", file, onProgress);
    return await api.put<Profile>("/api/profile", { imageId: uploaded.id });
  },
};
