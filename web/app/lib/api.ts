/**
 * Untyped calls to the API by path (`api.get<T>("/api/...")`), for the pages not yet moved to the
 * typed client (chat, store, vendor), plus what the typed client does not cover: downloads to a
 * file and uploads with progress. A thin layer over `client.ts`: the same fetch (`apiFetch`:
 * cookies, CSRF, `ApiError`, the 401/403 listeners), so both kinds of call behave alike.
 */

import {
  ApiError,
  apiFetch,
  apiOrigin,
  csrfToken,
  describeError,
  onAuthProblem,
  reportAuthProblem,
  resetCsrf,
  toError,
} from "./client.ts";

export { ApiError, apiOrigin, describeError, onAuthProblem, resetCsrf };

export interface RequestOptions {
  body?: unknown;
  signal?: AbortSignal;
  headers?: Record<string, string>;
  /** Skip the HTTP cache (e.g. the public configuration right after an admin changed it). */
  fresh?: boolean;
}

export async function request<T>(
  method: string,
  path: string,
  opts: RequestOptions = {},
): Promise<T> {
  const headers: Record<string, string> = { accept: "application/json", ...opts.headers };
  if (opts.body !== undefined) headers["content-type"] = "application/json";
  const response = await apiFetch(
    new Request(`${apiOrigin || location.origin}${path}`, {
      method,
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      credentials: "include",
      signal: opts.signal,
      cache: opts.fresh ? "no-store" : "default",
    }),
  );
  return response.status === 204 ? (undefined as T) : await response.json() as T;
}

export const api = {
  get: <T>(path: string, opts?: RequestOptions) => request<T>("GET", path, opts),
  post: <T>(path: string, body?: unknown, opts?: RequestOptions) =>
    request<T>("POST", path, { ...opts, body }),
  put: <T>(path: string, body?: unknown, opts?: RequestOptions) =>
    request<T>("PUT", path, { ...opts, body }),
  delete: <T>(path: string, opts?: RequestOptions) => request<T>("DELETE", path, opts),
};

/**
 * A GET whose answer the person saves as a file (the account's export): fetched with the cookies,
 * then handed to the browser's download through a short-lived object URL. The file name comes
 * from the answer's Content-Disposition when it has one.
 */
export async function download(path: string, fallbackName: string): Promise<string> {
  const response = await fetch(`${apiOrigin}${path}`, {
    credentials: "include",
    cache: "no-store",
  });
  if (!response.ok) {
    const error = await toError(response);
    reportAuthProblem(error);
    throw error;
  }
  const disposition = response.headers.get("content-disposition") ?? "";
  const name = /filename="([^"]+)"/.exec(disposition)?.[1] ?? fallbackName;
  const url = URL.createObjectURL(await response.blob());
  try {
    const a = document.createElement("a");
    a.href = url;
    a.download = name;
    a.hidden = true;
    document.body.append(a);
    a.click();
    a.remove();
  } finally {
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
  }
  return name;
}

/** A query string from the defined values only. */
export function query(params: Record<string, string | number | boolean | null | undefined>) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== "") q.set(k, String(v));
  }
  const text = q.toString();
  return text ? `?${text}` : "";
}

/**
 * A multipart upload with progress (fetch cannot report upload progress; XMLHttpRequest can).
 * Resolves with the API's JSON answer.
 */
export async function upload<T>(
  path: string,
  file: File,
  onProgress: (fraction: number) => void,
  signal?: AbortSignal,
): Promise<T> {
  const token = await csrfToken();
  return await new Promise<T>((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", `${apiOrigin}${path}`);
    xhr.withCredentials = true;
    xhr.setRequestHeader("x-csrf-token", token);
    xhr.setRequestHeader("accept", "application/json");
    xhr.responseType = "text";
    xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total);
    xhr.onload = () => {
      const response = new Response(xhr.responseText, { status: xhr.status });
      if (xhr.status >= 200 && xhr.status < 300) {
        onProgress(1);
        resolve(JSON.parse(xhr.responseText));
      } else void toError(response).then(reject);
    };
    xhr.onerror = () => reject(new ApiError(0, "network", "The upload failed (network)."));
    xhr.onabort = () => reject(new DOMException("Upload cancelled", "AbortError"));
    signal?.addEventListener("abort", () => xhr.abort(), { once: true });
    const form = new FormData();
    form.append("file", file, file.name);
    xhr.send(form);
  });
}
