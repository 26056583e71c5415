/** Picks the attachment storage from the settings: local disk by default. */
import type { Settings } from "./settings.ts";
import { localDiskStorage, type Storage } from "./storage.ts";
import { supabaseStorage } from "./supabase-storage.ts";

export function createStorage(settings: Settings): Storage {
  if (settings.storage.kind === "supabase") {
    const { supabaseUrl, serviceRoleKey, bucket } = settings.storage;
    const missing = [
      supabaseUrl ? null : "SUPABASE_URL",
      serviceRoleKey ? null : "SUPABASE_SERVICE_ROLE_KEY",
    ].filter((name) => name !== null);
    if (missing.length) {
      throw new Error(`AGORA_STORAGE=supabase needs ${missing.join(" and ")}`);
    }
    let url: URL;
    try {
      url = new URL(supabaseUrl!);
    } catch {
      throw new Error("AGORA_STORAGE=supabase needs SUPABASE_URL to be a URL");
    }
    if (url.protocol !== "https:" && url.protocol !== "http:") {
      throw new Error("AGORA_STORAGE=supabase needs SUPABASE_URL to be an http(s) URL");
    }
    if (!bucket) throw new Error("AGORA_STORAGE=supabase needs AGORA_STORAGE_BUCKET");
    return supabaseStorage({ url: supabaseUrl!, serviceRoleKey: serviceRoleKey!, bucket });
  }
  return localDiskStorage(settings.storage.dir);
}
