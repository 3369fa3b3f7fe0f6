// The per-request credential step of the ModelGateway: resolve the model's credential from
// config, auth.json and the environment (re-read per request); refresh a stored OAuth login
// first when it is within two minutes of expiry; route a ChatGPT (`codex`) login to the Codex
// Responses deployment; and, when the provider rejects a stored login's token with HTTP 401
// before any output, force one refresh and retry the request once.
import type { Env } from "../config/index.js";
import type { ModelCall } from "../core/turns/gateway.js";
import { StopSignal, fault } from "../core/turns/stop.js";
import type { ProviderCredentialScope } from "../providers/injected.js";
import {
  CODEX_METHOD_ID,
  CredentialRefresher,
  ProviderFailure,
  authFileLocation,
  codexEndpoint,
  injectedCredentialsOf,
  loadCredentialSources,
  openModel,
  resolveCredential,
  storedEntry,
  streamModel,
  type ModelStreamEvent,
  type OAuthAuthEntry,
  type ProviderSet,
  type ResolvedModel,
  refreshDue,
  refreshable,
  type Secret,
} from "../providers/index.js";

export type OpenedCall =
  | {
      readonly ok: true;
      readonly model: ResolvedModel;
      readonly credential?: Secret;
      /** The stored OAuth login the credential came from (a 401 may refresh it). */
      readonly login?: OAuthAuthEntry;
      /** Whose login that is: the model's provider, or the holder it is routed `via`. */
      readonly loginProviderId?: string;
    }
  | { readonly ok: false; readonly message: string };

export interface ModelCredentials {
  /** `sessionId`: the Session whose Turn asks (the catalog that Turn leased). */
  open(ref: string, sessionId?: string, scope?: ProviderCredentialScope): Promise<OpenedCall>;
  /** One attempt through the adapters, with the 401 refresh-and-retry of stored logins. */
  stream(call: ModelCall): AsyncGenerator<ModelStreamEvent>;
}

/** A ChatGPT login's requests go to the Codex Responses deployment, with its account header. */
function codexModel(model: ResolvedModel, login: OAuthAuthEntry, env: Env): ResolvedModel {
  return {
    ...model,
    protocol: "responses",
    endpoint: codexEndpoint(env),
    authentication: { kind: "bearer" },
    headers: { ...model.headers, originator: "ze-harness", ...(login.accountId !== undefined ? { "chatgpt-account-id": login.accountId } : {}) },
  };
}

/** The Session work a model call serves, for a scoped credential resolver (none outside a Session). */
export function credentialScope(call: Pick<ModelCall, "sessionId" | "turnId" | "compactionId">): ProviderCredentialScope | undefined {
  const { sessionId, turnId, compactionId } = call;
  if (sessionId === undefined || sessionId === "") return undefined;
  if (compactionId !== undefined) return { kind: "compaction", sessionId, compactionId };
  if (turnId !== undefined) return { kind: "turn", sessionId, turnId };
  return { kind: "detached", sessionId };
}

export function createModelCredentials(providers: (sessionId?: string) => ProviderSet, env: Env, refresher = new CredentialRefresher(() => authFileLocation(env))): ModelCredentials {
  async function open(ref: string, sessionId?: string, scope?: ProviderCredentialScope): Promise<OpenedCall> {
    const set = providers(sessionId);
    let sources = await loadCredentialSources(env);
    const target = set.model(ref);
    const provider = target !== undefined ? set.provider(target.providerId) : undefined;
    // A `via` provider authenticates with its holder's (TAP's) sign-in: that login is the one refreshed.
    const owner = provider?.holder ?? provider;
    if (owner !== undefined && owner.configuredKey === undefined) {
      const entry = storedEntry(owner, sources);
      if (entry?.type === "oauth" && refreshable(entry) && refreshDue(entry, Date.now())) {
        // Detached from the Turn: a cancelled request still completes the refresh and its write.
        await refresher.refresh(owner.id);
        sources = await loadCredentialSources(env);
      }
    }
    // Injected-only: the embedder's resolver answers first for this acquisition; else the slot.
    const injected = injectedCredentialsOf(env);
    const withKey = (providerId: string, key: string): void => {
      if ("entries" in sources.auth) sources = { ...sources, auth: { ...sources.auth, entries: { ...sources.auth.entries, [providerId]: { type: "api", key } } } };
    };
    // The scoped resolver (`resolveProviderCredential`) first, for acquisitions serving Session
    // work: its key, or its denial as the work's own fault (the text is the embedder's, never a key).
    let scopedKey = false;
    if (injected?.scoped !== undefined && provider !== undefined && scope !== undefined) {
      const answer = await injected.resolveScoped(provider.id, scope);
      if (answer.kind === "denied") throw new StopSignal({ kind: "failed", fault: fault("model_run_failed", answer.message, answer.code) });
      if (answer.kind === "key") {
        withKey(provider.id, answer.apiKey);
        scopedKey = true;
      }
    }
    if (injected?.resolver !== undefined && provider !== undefined && !scopedKey) {
      const key = await injected.resolver({ providerId: provider.id, ...(sessionId !== undefined ? { sessionId } : {}) });
      if (typeof key === "string" && key.trim() !== "") withKey(provider.id, key.trim());
    }
    const opened = openModel(set, ref, sources);
    if (!opened.ok) return { ok: false, message: opened.message };
    const resolution = owner !== undefined ? resolveCredential(owner, sources) : undefined;
    const entry = owner !== undefined ? storedEntry(owner, sources) : undefined;
    const login = resolution?.ok === true && resolution.origin === "stored" && entry?.type === "oauth" ? entry : undefined;
    const model = login?.login === CODEX_METHOD_ID && provider?.holder === undefined ? codexModel(opened.model, login, env) : opened.model;
    return {
      ok: true,
      model,
      ...(opened.credential !== undefined ? { credential: opened.credential } : {}),
      ...(login !== undefined && owner !== undefined ? { login, loginProviderId: owner.id } : {}),
    };
  }

  const unavailableFailure = (model: string, message: string): ProviderFailure =>
    new ProviderFailure({ kind: "auth", beforeOutput: true, retryable: false, message: `Model ${model} is unavailable: ${message}` });

  const requestOf = (call: ModelCall, opened: Extract<OpenedCall, { ok: true }>) => ({
    model: opened.model,
    ...(opened.credential !== undefined ? { credential: opened.credential } : {}),
    ...(call.system !== undefined ? { system: call.system } : {}),
    messages: call.messages,
    tools: call.tools,
    ...(call.reasoningEffort !== undefined ? { reasoningEffort: call.reasoningEffort } : {}),
    signal: call.signal,
    ...(call.sessionId !== undefined ? { sessionId: call.sessionId } : {}),
    ...(call.timeoutMs !== undefined ? { timeoutMs: call.timeoutMs } : {}),
  });

  return {
    open,
    async *stream(call: ModelCall): AsyncGenerator<ModelStreamEvent> {
      const opened = await open(call.model, call.sessionId, credentialScope(call));
      if (!opened.ok) throw unavailableFailure(call.model, opened.message);
      let started = false;
      try {
        for await (const event of streamModel(requestOf(call, opened))) {
          started = true;
          yield event;
        }
        return;
      } catch (error) {
        const rejected = error instanceof ProviderFailure && error.status === 401 && !started;
        if (!rejected || opened.login === undefined || opened.credential === undefined || call.signal.aborted) throw error;
      }
      // The provider rejected the stored login's token: one forced refresh (unless another request
      // already rotated it), then one retry with whatever storage now holds.
      await refresher.refresh(opened.loginProviderId ?? opened.model.providerId, { force: true, rejectedAccess: opened.credential.reveal() });
      const again = await open(call.model, call.sessionId, credentialScope(call));
      if (!again.ok) throw unavailableFailure(call.model, again.message);
      yield* streamModel(requestOf(call, again));
    },
  };
}
