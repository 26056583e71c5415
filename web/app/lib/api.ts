/**
 * Calls to the API: JSON in and out, the session cookies sent along, `X-CSRF-Token` on unsafe
 * requests (fetched once from GET /api/auth/csrf and kept in memory), errors turned into
 * `ApiError` with the API's `{ error: { code, message, details } }`. No token is ever stored by
 * script: the session lives in httpOnly cookies.
 *
 * The API is on the page's origin unless the build named another (`<meta name=agora-api-origin>`,
 * docs/web.md, Deploying); that origin must be same-site, since the cookies are SameSite=Lax.
 */

export const apiOrigin =
  document.querySelector<HTMLMetaElement>('meta[name="agora-api-origin"]')?.content ?? "";

export class ApiError extends Error {
  status: number;
  code: string;
  details?: unknown;
  constructor(status: number, code: string, message: string, details?: unknown) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

type AuthListener = (status: 401 | 403) => void;
const authListeners = new Set<AuthListener>();
/** Told about every 401 (the session ended) and 403 (a role may have changed). */
export function onAuthProblem(listener: AuthListener): () => void {
  authListeners.add(listener);
  return () => authListeners.delete(listener);
}

let csrf: Promise<string> | null = null;

function csrfToken(): Promise<string> {
  csrf ??= fetch(`${apiOrigin}/api/auth/csrf`, { credentials: "include", cache: "no-store" })
    .then((r) => r.json())
    .then((body: { csrfToken: string }) => body.csrfToken)
    .catch((err) => {
      csrf = null;
      throw err;
    });
  return csrf;
}

/** Forget the CSRF token (it is bound to the session: after sign-in and sign-out). */
export function resetCsrf(): void {
  csrf = null;
}

const SAFE = new Set(["GET", "HEAD"]);

async function toError(response: Response): Promise<ApiError> {
  const text = await response.text().catch(() => "");
  try {
    const { error } = JSON.parse(text);
    return new ApiError(response.status, error.code, error.message, error.details);
  } catch {
    return new ApiError(response.status, "http_error", `HTTP ${response.status}`);
  }
}

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
  for (let attempt = 0;; attempt++) {
    const headers: Record<string, string> = { accept: "application/json", ...opts.headers };
    if (opts.body !== undefined) headers["content-type"] = "application/json";
    if (!SAFE.has(method)) headers["x-csrf-token"] = await csrfToken();
    const response = await fetch(`${apiOrigin}${path}`, {
      method,
      headers,
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      credentials: "include",
      signal: opts.signal,
      cache: opts.fresh ? "no-store" : "default",
    });
    if (response.ok) {
      return response.status === 204 ? (undefined as T) : await response.json() as T;
    }
    const error = await toError(response);
    // A CSRF token from before a sign-in (or a refreshed session) is stale: fetch it once more.
    if (error.status === 403 && /csrf/i.test(error.message) && attempt === 0) {
      resetCsrf();
      continue;
    }
    if (error.status === 401 || error.status === 403) {
      for (const listener of [...authListeners]) listener(error.status);
    }
    throw error;
  }
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
    if (error.status === 401 || error.status === 403) {
      for (const listener of [...authListeners]) listener(error.status);
    }
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

/** A human sentence for an error of any kind. */
export function describeError(err: unknown): string {
  if (err instanceof ApiError) return err.message;
  if (err instanceof DOMException && err.name === "AbortError") return "Cancelled.";
  if (err instanceof TypeError) return "The server cannot be reached. Check your connection.";
  return String(err instanceof Error ? err.message : err);
}
