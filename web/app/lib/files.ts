/**
 * Files to and from the API, which the typed client (`client.ts`) does not express: a download
 * the browser saves as a file (the account's export: the answer is a file, not JSON the page
 * reads), and a multipart upload with its progress (fetch cannot report upload progress;
 * XMLHttpRequest can). Both go with the session cookies, CSRF and refusals as `ApiError`, like
 * every typed call.
 */
import { ApiError, apiOrigin, csrfToken, reportAuthProblem, toError } from "./client.ts";

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
