// `web-fetch`: bounded HTTP text fetching (`context.webFetch`). Rejects with `WebFetchError`.
export type { WebFetchErrorCode, WebFetchFailure } from "./failures.js";

/** Preferred response format: only the `Accept` preference; the body is returned as received. */
export type WebFetchFormat = "markdown" | "text" | "html";

export interface WebFetch {
  /** One `GET`, redirects followed, the whole body read as UTF-8 text within the limits. */
  readonly fetchText: (input: {
    readonly url: string;
    readonly format: WebFetchFormat;
    /** Positive integer up to `MAX_WEB_FETCH_TIMEOUT_MS`; defaults to `DEFAULT_WEB_FETCH_TIMEOUT_MS`. */
    readonly timeoutMs?: number | undefined;
    readonly signal: AbortSignal;
  }) => Promise<{ readonly content: string; readonly contentType: string; readonly byteLength: number }>;
}
