// HarnessClient: the reference's method-style Client over the generated SDK — every call
// addresses one server (`local` unless told), unwraps `{ data, error }` into data or a thrown
// ZeClientError, and the watchers reconnect (clients/watch.ts). Single-resource reads return the
// resource itself (`createSession` → Session, `getTurn` → Turn, `listSessions` → Session[]). Operations without a method
// here stay reachable through `api` with the generated `sdk` functions.
import * as sdk from "../generated/client/sdk.gen.js";
import type {
  AppendConversationRequest,
  CancelTurnRequest,
  CreateSessionRequest,
  ForkSessionRequest,
  PermissionReplyRequest,
  PromptPart,
  QuestionReplyRequest,
  ReplaceSessionConfigurationRequest,
  SubmitPromptRequest,
  Turn,
} from "../generated/client/types.gen.js";
import { createZeClient, unwrap, type ZeClient, type ZeClientOptions } from "./client.js";
import { getRuntimeModels, getSessionModels, runtimeModelsRevision, sessionModelsRevision } from "./models.js";
import {
  cancelProviderLogin,
  connectProviderKey,
  deleteProviderConnection,
  getProvider,
  getProviderLogin,
  listProviders,
  startProviderLogin,
  updateProviderConnection,
  waitProviderLogin,
  type WaitProviderLoginOptions,
} from "./providers.js";
import { watchServer, watchSession, watchTurn, type WatchServerOptions, type WatchSessionOptions, type WatchTurnOptions } from "./watch.js";

export interface CreateClientOptions extends ZeClientOptions {
  /** The server every Session call addresses (default `local`, the one a local host serves). */
  readonly server?: string | undefined;
}

/** A text-only prompt: `submitPrompt(id, { delivery: "queue", turnId, prompt: textPrompt("hi") })`. */
export function textPrompt(text: string): PromptPart[] {
  return [{ type: "text", text }];
}

type Without<T, K extends keyof T> = Omit<T, K>;

export class HarnessClient {
  readonly api: ZeClient;
  readonly server: string;

  constructor(options: CreateClientOptions | ZeClient) {
    this.api = "client" in options ? options : createZeClient(options);
    this.server = ("server" in options ? options.server : undefined) ?? "local";
  }

  private get client() {
    return this.api.client;
  }

  private session(sessionId: string) {
    return { server: this.server, sessionId };
  }

  // ---- Sessions ----

  /** Creates a Session (`id` generated unless given) and returns it. */
  createSession(input: CreateSessionRequest & { readonly id?: string } = {}) {
    const { id, ...body } = input;
    return unwrap(sdk.createSession({ client: this.client, path: this.session(id ?? globalThis.crypto.randomUUID()), body })).then((data) => data.session);
  }
  getSession(sessionId: string) {
    return unwrap(sdk.getSession({ client: this.client, path: this.session(sessionId) })).then((data) => data.session);
  }
  listSessions(options: { readonly projectId?: string } = {}) {
    return unwrap(sdk.listSessions({ client: this.client, path: { server: this.server }, ...(options.projectId !== undefined ? { query: { projectId: options.projectId } } : {}) })).then((data) => data.sessions);
  }
  deleteSession(sessionId: string) {
    return unwrap(sdk.deleteSession({ client: this.client, path: this.session(sessionId) }));
  }
  deleteServer() {
    return unwrap(sdk.deleteServer({ client: this.client, path: { server: this.server } }));
  }
  setSessionTitle(sessionId: string, title: string) {
    return unwrap(sdk.setSessionTitle({ client: this.client, path: this.session(sessionId), body: { title } }));
  }
  forkSession(sessionId: string, input: ForkSessionRequest & { readonly id?: string } = {}) {
    const { id, ...body } = input;
    return unwrap(sdk.forkSession({ client: this.client, path: { ...this.session(sessionId), forkedSessionId: id ?? globalThis.crypto.randomUUID() }, body })).then((data) => data.session);
  }
  appendConversation(sessionId: string, input: Without<AppendConversationRequest, "entryId"> & { readonly entryId?: string }) {
    const body = { ...input, entryId: input.entryId ?? globalThis.crypto.randomUUID() } as AppendConversationRequest;
    return unwrap(sdk.appendConversation({ client: this.client, path: this.session(sessionId), headers: { "x-ze-harness-client-id": this.api.clientId }, body }));
  }
  getSessionConfiguration(sessionId: string) {
    return unwrap(sdk.getSessionConfiguration({ client: this.client, path: this.session(sessionId) }));
  }
  replaceSessionConfiguration(sessionId: string, body: ReplaceSessionConfigurationRequest) {
    return unwrap(sdk.replaceSessionConfiguration({ client: this.client, path: this.session(sessionId), body }));
  }
  listSessionChildren(sessionId: string) {
    return unwrap(sdk.listSessionChildren({ client: this.client, path: this.session(sessionId) }));
  }
  promoteSessionBackground(sessionId: string) {
    return unwrap(sdk.promoteSessionBackground({ client: this.client, path: this.session(sessionId) }));
  }
  capabilities() {
    return unwrap(sdk.capabilities({ client: this.client }));
  }

  // ---- Turns ----

  /** Queues a Turn (`{ delivery: "queue", turnId, prompt }`) or steers the running one. */
  submitPrompt(sessionId: string, request: SubmitPromptRequest) {
    return unwrap(sdk.submitPrompt({ client: this.client, path: this.session(sessionId), headers: { "x-ze-harness-client-id": this.api.clientId }, body: request }));
  }
  getTurn(sessionId: string, turnId: string) {
    return unwrap(sdk.getTurn({ client: this.client, path: { ...this.session(sessionId), turnId } })).then((data) => data.turn);
  }
  listSessionTurns(sessionId: string, options: { readonly limit?: number; readonly afterSequence?: number } = {}) {
    const query = {
      ...(options.limit !== undefined ? { limit: String(options.limit) } : {}),
      ...(options.afterSequence !== undefined ? { afterSequence: String(options.afterSequence) } : {}),
    };
    return unwrap(sdk.listSessionTurns({ client: this.client, path: this.session(sessionId), query }));
  }
  cancelTurn(sessionId: string, turnId: string, body: CancelTurnRequest = {}) {
    return unwrap(sdk.cancelTurn({ client: this.client, path: { ...this.session(sessionId), turnId }, body }));
  }
  /** Follows a Turn to its end (reconnecting) and resolves with the final Turn. */
  watchTurn(sessionId: string, turnId: string, options: Omit<WatchTurnOptions, "server" | "sessionId" | "turnId"> = {}): Promise<Turn> {
    return watchTurn(this.api, { ...options, server: this.server, sessionId, turnId });
  }
  watchSession(sessionId: string, options: Omit<WatchSessionOptions, "server" | "sessionId">) {
    return watchSession(this.api, { ...options, server: this.server, sessionId } as WatchSessionOptions);
  }
  watchServer(options: Omit<WatchServerOptions, "server">) {
    return watchServer(this.api, { ...options, server: this.server } as WatchServerOptions);
  }

  // ---- Models and providers (the reference's "Model discovery and provider management") ----

  getRuntimeModels() {
    return getRuntimeModels(this.api);
  }
  /** A single-shot current-revision check: the present `hostRevision` (re-call to re-check). */
  watchRuntimeModels(options: { readonly signal?: AbortSignal } = {}) {
    return runtimeModelsRevision(this.api, options);
  }
  getSessionModels(sessionId: string) {
    return getSessionModels(this.api, { server: this.server, sessionId });
  }
  /** A single-shot check of the revision the Session adopted. */
  watchSessionModels(sessionId: string, options: { readonly signal?: AbortSignal } = {}) {
    return sessionModelsRevision(this.api, { server: this.server, sessionId }, options);
  }
  listProviders() {
    return listProviders(this.api);
  }
  getProvider(providerId: string) {
    return getProvider(this.api, providerId);
  }
  connectProviderKey(providerId: string, input: { readonly apiKey: string; readonly label?: string }) {
    return connectProviderKey(this.api, providerId, input);
  }
  updateProviderConnection(providerId: string, connectionId: string, input: { readonly label: string }) {
    return updateProviderConnection(this.api, providerId, connectionId, input);
  }
  deleteProviderConnection(providerId: string, connectionId: string) {
    return deleteProviderConnection(this.api, providerId, connectionId);
  }
  startProviderLogin(providerId: string, input: { readonly methodId?: string } = {}) {
    return startProviderLogin(this.api, providerId, input);
  }
  getProviderLogin(providerId: string, loginId: string, options: { readonly waitMs?: number } = {}) {
    return getProviderLogin(this.api, providerId, loginId, options);
  }
  waitProviderLogin(providerId: string, loginId: string, options: WaitProviderLoginOptions = {}) {
    return waitProviderLogin(this.api, providerId, loginId, options);
  }
  cancelProviderLogin(providerId: string, loginId: string) {
    return cancelProviderLogin(this.api, providerId, loginId);
  }

  // ---- Permissions and questions ----

  replyPermission(sessionId: string, permissionRequestId: string, body: PermissionReplyRequest) {
    return unwrap(sdk.replyPermission({ client: this.client, path: { ...this.session(sessionId), permissionRequestId }, body }));
  }
  listSavedPermissions(sessionId: string) {
    return unwrap(sdk.listSavedPermissions({ client: this.client, path: this.session(sessionId) }));
  }
  removeSavedPermission(sessionId: string, savedPermissionId: string) {
    return unwrap(sdk.removeSavedPermission({ client: this.client, path: { ...this.session(sessionId), savedPermissionId } }));
  }
  replyQuestion(sessionId: string, questionRequestId: string, body: QuestionReplyRequest) {
    return unwrap(sdk.replyQuestion({ client: this.client, path: { ...this.session(sessionId), questionRequestId }, body }));
  }
  rejectQuestion(sessionId: string, questionRequestId: string) {
    return unwrap(sdk.rejectQuestion({ client: this.client, path: { ...this.session(sessionId), questionRequestId } }));
  }
  listDescendantPendingApprovals(sessionId: string) {
    return unwrap(sdk.listDescendantPendingApprovals({ client: this.client, path: this.session(sessionId) }));
  }
  listDescendantPendingQuestions(sessionId: string) {
    return unwrap(sdk.listDescendantPendingQuestions({ client: this.client, path: this.session(sessionId) }));
  }
}

/** The reference's `createClient`: a method-style client over the network or an injected Fetch handler. */
export function createClient(options: CreateClientOptions): HarnessClient {
  return new HarnessClient(options);
}
