// Host-held provider logins: start one (the prompt comes back at once), let clients long-poll its
// status, cancel it. Polling, `slow_down` back-off, expiry, the token exchange and the credential
// write happen here on the host; device codes and tokens never leave it — a login's public state
// is the contract's `ProviderLogin` (prompt, then connection metadata or a failure reason).
// Starting a login cancels the provider's pending one. Logins live in memory: a host restart
// forgets pending ones (the user starts again), and the last settled ones are kept for a while
// so a client that polls late still sees the outcome.
import { randomUUID } from "node:crypto";
import type { ProviderLogin, SafeProviderConnection } from "../../../generated/client/types.gen.js";
import type { Env } from "../../config/paths.js";
import { updateAuthEntry, type AuthFileError, type AuthFileLocation } from "../auth-file.js";
import type { ResolvedProvider } from "../registry.js";
import type { LoginMethod, LoginOutcome } from "./flow.js";
import { runnableLoginMethods } from "./methods.js";
import { LoginStepError, defaultLoginContext, type LoginContext } from "./oauth.js";

/** Settled logins kept for late pollers (the oldest are dropped first). */
const SETTLED_KEPT = 64;
/** The longest one status request waits (`waitMs` above this waits this long). */
export const MAX_WAIT_MS = 30_000;

interface Login {
  readonly id: string;
  readonly providerId: string;
  readonly abort: AbortController;
  state: ProviderLogin;
  readonly waiters: Set<() => void>;
}

export type StartLoginResult =
  | { readonly ok: true; readonly login: ProviderLogin }
  | { readonly ok: false; readonly reason: "no_login" }
  | { readonly ok: false; readonly reason: "unknown_method"; readonly methods: readonly string[] };

export interface LoginManagerOptions {
  /** Where connections are stored (re-evaluated per login, as the environment may change). */
  readonly location: () => AuthFileLocation;
  readonly env: Env;
  readonly context?: LoginContext;
  /** Called after a login stored its connection. */
  readonly onConnected?: (providerId: string) => void;
}

const expiry = (value: number): number | "Infinity" =>
  Number.isFinite(value) ? Math.floor(value) : "Infinity";

export class LoginManager {
  private readonly logins = new Map<string, Login>();
  private readonly context: LoginContext;

  constructor(private readonly options: LoginManagerOptions) {
    this.context = options.context ?? defaultLoginContext();
  }

  /** Starts a login with `methodId` (default: the provider's first method), cancelling its pending one. */
  async start(provider: ResolvedProvider, methodId?: string): Promise<StartLoginResult> {
    const methods = runnableLoginMethods(provider, this.options.env);
    if (methods.length === 0) return { ok: false, reason: "no_login" };
    const method = methodId === undefined ? methods[0]! : methods.find((candidate) => candidate.id === methodId);
    if (method === undefined) return { ok: false, reason: "unknown_method", methods: methods.map((candidate) => candidate.id) };
    for (const login of this.logins.values()) {
      if (login.providerId === provider.id && login.state.status === "pending") this.cancelLogin(login);
    }
    const login: Login = {
      id: `login_${randomUUID()}`,
      providerId: provider.id,
      abort: new AbortController(),
      state: { status: "failed", loginId: "", reason: "error", message: "" },
      waiters: new Set(),
    };
    this.logins.set(login.id, login);
    this.prune();
    await this.begin(login, provider, method);
    return { ok: true, login: login.state };
  }

  private async begin(login: Login, provider: ResolvedProvider, method: LoginMethod): Promise<void> {
    let started;
    try {
      started = await method.start(this.context, login.abort.signal);
    } catch (error) {
      login.state = { status: "failed", loginId: login.id, reason: "error", message: error instanceof LoginStepError ? error.message : "the login could not start" };
      return;
    }
    login.state = {
      status: "pending",
      loginId: login.id,
      methodId: method.id,
      prompt: { kind: "device", verificationUrl: started.prompt.verificationUrl, userCode: started.prompt.userCode },
      expiresAt: expiry(started.expiresAt),
    };
    started.complete(login.abort.signal).then(
      (outcome) => this.finish(login, provider, outcome),
      () => {
        // Aborted (cancelled or the host closing); anything else is a bug in a flow: fail safely.
        if (login.state.status === "pending") this.settle(login, { status: "failed", loginId: login.id, reason: "error", message: "the login failed" });
      },
    );
  }

  private async finish(login: Login, provider: ResolvedProvider, outcome: LoginOutcome): Promise<void> {
    if (login.state.status !== "pending") return;
    if (!outcome.ok) return this.settle(login, { status: "failed", loginId: login.id, reason: outcome.reason, message: outcome.message });
    const now = this.context.now();
    const connectionId = `conn_${randomUUID()}`;
    const entry = { ...outcome.entry, connectionId, label: provider.id, createdAt: now, updatedAt: now };
    // A login replaces the provider's stored connection.
    const written = await updateAuthEntry(this.options.location(), provider.id, () => entry);
    if (login.state.status !== "pending") return;
    if (!written.ok) return this.settle(login, { status: "failed", loginId: login.id, reason: "error", message: `the login could not be stored: ${(written.error as AuthFileError).message}` });
    const connection: SafeProviderConnection = { connectionId, providerId: provider.id, label: entry.label, method: "oauth", status: "ready", createdAt: now, updatedAt: now };
    this.settle(login, { status: "connected", loginId: login.id, connection });
    this.options.onConnected?.(provider.id);
  }

  private settle(login: Login, state: ProviderLogin): void {
    login.state = state;
    for (const waiter of [...login.waiters]) waiter();
  }

  private cancelLogin(login: Login): void {
    if (login.state.status !== "pending") return;
    this.settle(login, { status: "failed", loginId: login.id, reason: "cancelled", message: "the login was cancelled" });
    login.abort.abort(new Error("cancelled"));
  }

  private prune(): void {
    const settled = [...this.logins.values()].filter((login) => login.state.status !== "pending");
    for (const login of settled.slice(0, Math.max(0, settled.length - SETTLED_KEPT))) this.logins.delete(login.id);
  }

  private find(providerId: string, loginId: string): Login | undefined {
    const login = this.logins.get(loginId);
    return login?.providerId === providerId ? login : undefined;
  }

  /** The login's status now, or after it changes, waiting at most `waitMs` (capped at 30 s). */
  async wait(providerId: string, loginId: string, waitMs = 0): Promise<ProviderLogin | undefined> {
    const login = this.find(providerId, loginId);
    if (login === undefined) return undefined;
    if (login.state.status !== "pending" || waitMs <= 0) return login.state;
    const before = login.state;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        login.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, Math.min(waitMs, MAX_WAIT_MS));
      login.waiters.add(done);
      if (login.state !== before) done();
    });
    return login.state;
  }

  /** Cancels a pending login; a settled one is returned unchanged. */
  cancel(providerId: string, loginId: string): ProviderLogin | undefined {
    const login = this.find(providerId, loginId);
    if (login === undefined) return undefined;
    this.cancelLogin(login);
    return login.state;
  }

  /** Cancels every pending login (the host is closing). */
  close(): void {
    for (const login of this.logins.values()) this.cancelLogin(login);
  }
}
