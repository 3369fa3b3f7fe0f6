// The one typed failure every adapter throws: `ProviderFailure`. Retrying is the Turn loop's
// job (the SDKs run with `maxRetries: 0`); this file only classifies. `retryable` says whether
// the kind of failure can succeed on a new attempt; `beforeOutput` says whether the attempt had
// streamed any content yet — Core retries only attempts rejected before output.
//
// Messages are safe by construction: a provider's own words (error bodies, in-stream error
// messages) never become part of one. A message is our fixed wording, the model label and the
// HTTP status; the provider's code and request ID survive only as short tokens (`safeToken`),
// because a body can echo the credential in any spelling (upper-cased, spaced out, split) and no
// filter over free text can prove it did not.

export type ProviderFailureKind =
  | "auth"
  | "rate_limit"
  | "bad_request"
  | "server"
  | "transport"
  | "timeout"
  | "aborted"
  | "too_large";

/** The plain data of a failure (what `toJSON()` returns). */
export interface ProviderFailureData {
  readonly _tag: "ProviderFailure";
  readonly kind: ProviderFailureKind;
  /** The HTTP status, when the provider answered with one. */
  readonly status?: number;
  readonly retryable: boolean;
  readonly beforeOutput: boolean;
  /** Our own wording (model label, what failed, HTTP status): never text the provider sent. */
  readonly message: string;
  /** The provider's error code or type (e.g. `rate_limit_exceeded`, `overloaded_error`), only when a safe token. */
  readonly providerCode?: string;
  /** The provider's requested wait (`retry-after`), in milliseconds. */
  readonly retryAfterMs?: number;
  /** The provider's request ID, when it sent one that is a safe token (for support tickets). */
  readonly requestId?: string;
}

const RETRYABLE: Readonly<Record<ProviderFailureKind, boolean>> = {
  auth: false,
  rate_limit: true,
  bad_request: false,
  server: true,
  transport: true,
  timeout: true,
  aborted: false,
  too_large: false,
};

export class ProviderFailure extends Error implements ProviderFailureData {
  readonly _tag = "ProviderFailure" as const;
  readonly kind: ProviderFailureKind;
  readonly status?: number;
  readonly retryable: boolean;
  readonly beforeOutput: boolean;
  readonly providerCode?: string;
  readonly retryAfterMs?: number;
  readonly requestId?: string;

  constructor(data: Omit<ProviderFailureData, "_tag" | "retryable"> & { readonly retryable?: boolean }) {
    super(data.message);
    this.name = "ProviderFailure";
    this.kind = data.kind;
    this.retryable = data.retryable ?? RETRYABLE[data.kind];
    this.beforeOutput = data.beforeOutput;
    if (data.status !== undefined) this.status = data.status;
    if (data.providerCode !== undefined) this.providerCode = data.providerCode;
    if (data.retryAfterMs !== undefined) this.retryAfterMs = data.retryAfterMs;
    if (data.requestId !== undefined) this.requestId = data.requestId;
  }

  /** The same failure, re-stamped with whether output had started. */
  withBeforeOutput(beforeOutput: boolean): ProviderFailure {
    if (beforeOutput === this.beforeOutput) return this;
    return new ProviderFailure({ ...this.toJSON(), beforeOutput });
  }

  toJSON(): ProviderFailureData {
    return {
      _tag: this._tag,
      kind: this.kind,
      ...(this.status !== undefined ? { status: this.status } : {}),
      retryable: this.retryable,
      beforeOutput: this.beforeOutput,
      message: this.message,
      ...(this.providerCode !== undefined ? { providerCode: this.providerCode } : {}),
      ...(this.retryAfterMs !== undefined ? { retryAfterMs: this.retryAfterMs } : {}),
      ...(this.requestId !== undefined ? { requestId: this.requestId } : {}),
    };
  }
}

export const isProviderFailure = (value: unknown): value is ProviderFailure => value instanceof ProviderFailure;

/** The kind an HTTP error status means. */
export function kindOfStatus(status: number): ProviderFailureKind {
  if (status === 401 || status === 403) return "auth";
  if (status === 408) return "timeout";
  if (status === 413) return "too_large";
  if (status === 429) return "rate_limit";
  if (status >= 500) return "server";
  return "bad_request";
}

/** The kind a provider error type/code means when no status says it (errors sent inside a stream). */
export function kindOfCode(code: string | undefined): ProviderFailureKind | undefined {
  if (code === undefined) return undefined;
  const value = code.toLowerCase();
  if (/overloaded|server_error|api_error|internal|unavailable/.test(value)) return "server";
  if (/rate_limit|too_many|quota/.test(value)) return "rate_limit";
  if (/authentication|permission|unauthori[sz]ed|invalid_api_key|forbidden/.test(value)) return "auth";
  if (/too_large|request_too_large/.test(value)) return "too_large";
  if (/timeout/.test(value)) return "timeout";
  if (/invalid|not_found|bad_request|context_length|unsupported/.test(value)) return "bad_request";
  return undefined;
}

/** What a provider-sent code or request ID must look like to be kept: one short plain token. */
const SAFE_TOKEN = /^[A-Za-z0-9_.:-]{1,64}$/;

/** Below this length a token cannot carry a meaningful piece of a credential (e.g. `error`). */
const MIN_SECRET_PIECE = 8;

/** Letters and digits only, lower-cased: separators and case cannot hide a credential from the comparison. */
const folded = (text: string): string => text.toLowerCase().replace(/[^a-z0-9]/g, "");

/**
 * `value` when it is a short plain token (`SAFE_TOKEN`) that neither contains a secret nor is a
 * piece of one, compared case- and separator-insensitively; otherwise undefined (dropped, never
 * rewritten). For provider codes and request IDs — never for free text.
 */
export function safeToken(value: unknown, secrets: readonly string[]): string | undefined {
  if (typeof value !== "string" || !SAFE_TOKEN.test(value)) return undefined;
  const token = folded(value);
  for (const secret of secrets) {
    const hidden = folded(secret);
    if (hidden === "") continue;
    if (token.includes(hidden)) return undefined;
    if (token.length >= MIN_SECRET_PIECE && hidden.includes(token)) return undefined;
  }
  return value;
}

/** `retry-after` (seconds or an HTTP date) or `retry-after-ms`, in milliseconds. */
export function retryAfterOf(headers: Headers | undefined, now: number = Date.now()): number | undefined {
  if (headers === undefined) return undefined;
  const ms = headers.get("retry-after-ms");
  if (ms !== null && /^\d+(\.\d+)?$/.test(ms.trim())) return Math.ceil(Number(ms));
  const value = headers.get("retry-after");
  if (value === null) return undefined;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Math.ceil(Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
