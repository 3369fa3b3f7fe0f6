// On-demand refresh of stored OAuth logins (the `refresh_token` grant at the token endpoint
// recorded with the login). A model request asks for a refresh when the access token is within
// two minutes of its stored expiry or JWT `exp`, or after the provider rejected it with 401
// (`force`). One refresh per provider runs at a time and storage is re-read first, so a rotation
// made by another request or process is reused instead of spending the refresh token twice.
// The refresh and its write run detached from the caller: a cancelled Turn does not cut them
// short. A refresh token the provider rejects marks the login `refreshRejected` — no further
// attempts until the next `provider login` (the connection reports `reconnect_required`).
import { readAuthFile, updateAuthEntry, type AuthFileLocation, type OAuthAuthEntry } from "../auth-file.js";
import { CODEX_METHOD_ID, codexAccountId } from "./codex.js";
import { authorizationURL, defaultLoginContext, effectiveExpiry, postForm, safeCode, tokenSet, type LoginContext } from "./oauth.js";

/** Refresh this close to expiry (the reference's two minutes). */
export const REFRESH_MARGIN_MS = 2 * 60 * 1000;

/** Can this login be refreshed at all? */
export const refreshable = (entry: OAuthAuthEntry): boolean =>
  entry.refreshRejected !== true && entry.refresh !== "" && entry.tokenEndpoint !== undefined;

/** Is the access token due for a refresh at `now`? */
export const refreshDue = (entry: OAuthAuthEntry, now: number): boolean => effectiveExpiry(entry) - REFRESH_MARGIN_MS <= now;

export type RefreshOutcome = "fresh" | "refreshed" | "rotated_elsewhere" | "rejected" | "failed" | "not_refreshable";

export interface RefreshRequest {
  /** Refresh even though the token is not due (the provider answered 401 with `rejectedAccess`). */
  readonly force?: boolean;
  /** The access token the provider rejected: when storage already holds another, that one is used. */
  readonly rejectedAccess?: string;
}

export class CredentialRefresher {
  private readonly inflight = new Map<string, Promise<RefreshOutcome>>();

  constructor(
    private readonly location: () => AuthFileLocation,
    private readonly context: LoginContext = defaultLoginContext(),
  ) {}

  /** Refreshes `providerId`'s stored login when due (or forced); joins a refresh already under way. */
  refresh(providerId: string, request: RefreshRequest = {}): Promise<RefreshOutcome> {
    const running = this.inflight.get(providerId);
    if (running !== undefined) return running;
    const task = this.run(providerId, request).finally(() => this.inflight.delete(providerId));
    this.inflight.set(providerId, task);
    return task;
  }

  private async run(providerId: string, request: RefreshRequest): Promise<RefreshOutcome> {
    const location = this.location();
    const read = await readAuthFile(location);
    if (!read.ok) return "failed";
    const entry = Object.hasOwn(read.value.entries, providerId) ? read.value.entries[providerId] : undefined;
    if (entry?.type !== "oauth") return "not_refreshable";
    if (request.rejectedAccess !== undefined && entry.access !== request.rejectedAccess) return "rotated_elsewhere";
    if (!request.force && !refreshDue(entry, this.context.now())) return "fresh";
    if (!refreshable(entry) || location.content !== undefined) return "not_refreshable";
    const endpoint = authorizationURL(entry.tokenEndpoint!);
    if (endpoint === undefined) return "not_refreshable";
    let answer: Awaited<ReturnType<typeof postForm>>;
    try {
      answer = await postForm(this.context, endpoint, { grant_type: "refresh_token", refresh_token: entry.refresh, client_id: entry.clientId });
    } catch {
      return "failed";
    }
    const spent = entry.refresh;
    if (answer.status === 200) {
      const tokens = tokenSet(answer.body, this.context.now());
      if (tokens === undefined) return "failed";
      const accountId = entry.login === CODEX_METHOD_ID ? (codexAccountId(tokens.idToken, tokens.access) ?? entry.accountId) : entry.accountId;
      const written = await updateAuthEntry(location, providerId, (current) =>
        // Another process may have logged in again meanwhile: never overwrite a different login.
        current?.type === "oauth" && current.refresh === spent
          ? { ...current, access: tokens.access, refresh: tokens.refresh ?? current.refresh, expires: tokens.expires, ...(accountId !== undefined ? { accountId } : {}) }
          : "keep",
      );
      return written.ok ? "refreshed" : "failed";
    }
    const code = safeCode(answer.body?.["error"]);
    if (answer.status === 400 || answer.status === 401 || code === "invalid_grant") {
      await updateAuthEntry(location, providerId, (current) =>
        current?.type === "oauth" && current.refresh === spent ? { ...current, refreshRejected: true } : "keep",
      );
      return "rejected";
    }
    return "failed";
  }
}
