// A `Bundle` plugin's bytes as a plugin value in the server object: each bundle runs in its own
// Dynamic Worker (`env.LOADER.get(<server>/<digest>, …)`: one isolate per distinct bundle, shared by
// every Session of the object that activates the same bytes; LOADER ids are Worker-wide, so
// `scopedLoader` puts the server name in each id and no module state crosses server objects), whose main module
// (worker/plugins-isolate.ts) answers RPC. The value returned here is an ordinary plugin
// (`{ id, setup }`) for Core's activation (services/plugins/activate.ts): its `setup` asks the
// isolate what the bundle's setup registered and registers the same contributions on the real
// context — tools (with their permission projection), hooks, Skills, Agents — each of whose calls
// crosses to the isolate. The host's own checks (declarations, namespaces, timeouts, failures)
// apply unchanged. Workspace files and `webFetch` reach the isolate through an RpcTarget over the
// generation's capabilities (the /workspace store, the host's bounded fetch); a tool's activity, questions and journal through
// another over its execution context, including its abort signal (`waitForAbort`: the isolate
// aborts its own signal when the Turn's aborts; the host stops waiting at once either way). Not
// bridged: `onOutput` callbacks.
import { RpcTarget } from "cloudflare:workers";
import { PluginError, type JsonObject, type PluginContext, type ToolDeclaration, type ToolExecutionContext, type ToolPermissionContext, type WebFetch, type WorkspaceFiles } from "../plugin/index.js";
import { PLUGIN_ISOLATE_MAIN } from "./plugins-isolate.js";

/** The `worker_loaders` binding (`LOADER`): the part this host uses. */
export interface WorkerLoaderBinding {
  get(id: string, code: () => Promise<WorkerLoaderCode>): { getEntrypoint(name?: string): unknown };
}

export interface WorkerLoaderCode {
  readonly compatibilityDate: string;
  readonly compatibilityFlags?: readonly string[];
  readonly mainModule: string;
  readonly modules: Readonly<Record<string, string>>;
}

/** `loader` with every isolate id scoped to one server object (LOADER ids are shared by the whole Worker). */
export function scopedLoader(loader: WorkerLoaderBinding | undefined, server: string): WorkerLoaderBinding | undefined {
  return loader === undefined ? undefined : { get: (id, code) => loader.get(`${encodeURIComponent(server)}/${id}`, code) };
}

/** The Dynamic Workers' compatibility date: the Worker's own (tools/worker/bundle.mjs `COMPATIBILITY_DATE`). */
const COMPATIBILITY_DATE = "2025-12-01";

type Answer<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: { name: string; message: string; publicMessage?: string; code?: string; tag?: string } };

interface PlainTool {
  readonly id: string;
  readonly description: string;
  readonly inputSchema: ToolDeclaration["inputSchema"];
  readonly permissions: boolean;
  readonly discoversWorkspaceInstructions?: true;
  readonly directOnly?: true;
}

interface Described {
  readonly id: unknown;
  readonly fingerprint: string;
  readonly tools: readonly PlainTool[];
  readonly hooks: readonly string[];
  readonly skills: readonly unknown[];
  readonly agents: readonly unknown[];
  readonly defaults: readonly string[];
  readonly cleanup: boolean;
}

/** The isolate's RPC surface (worker/plugins-isolate.ts `BundlePlugin`). */
interface BundleEntrypoint {
  id(): Promise<unknown>;
  describe(activation: unknown, options: JsonObject, caps: HostTarget): Promise<Answer<Described>>;
  permissions(activation: unknown, options: JsonObject, caps: HostTarget, fingerprint: string, toolId: string, input: unknown, context: unknown): Promise<Answer<unknown>>;
  execute(activation: unknown, options: JsonObject, caps: HostTarget, fingerprint: string, toolId: string, input: unknown, context: unknown, bridge: ToolBridge): Promise<Answer<unknown>>;
  hook(activation: unknown, options: JsonObject, caps: HostTarget, fingerprint: string, index: number, input: unknown): Promise<Answer<unknown>>;
  cleanup(activation: unknown, options: JsonObject, caps: HostTarget, fingerprint: string): Promise<Answer<null>>;
}

const FILE_METHODS = new Set(["resolvePath", "readText", "writeText", "removeFile", "readDirectory"]);

/** `context.workspaceFiles` and `webFetch` as the isolate calls them: answers, never throws (a thrown value's fields do not cross RPC). */
class HostTarget extends RpcTarget {
  readonly #files: WorkspaceFiles;
  readonly #web: WebFetch;
  constructor(files: WorkspaceFiles, web: WebFetch) {
    super();
    this.#files = files;
    this.#web = web;
  }
  async webFetch(input: unknown): Promise<{ ok: true; value: unknown } | { ok: false; code: string }> {
    try {
      const given = (input !== null && typeof input === "object" ? input : {}) as Parameters<WebFetch["fetchText"]>[0];
      return { ok: true, value: await this.#web.fetchText({ ...given, signal: new AbortController().signal }) };
    } catch (error) {
      const code = (error as { _tag?: unknown; code?: unknown })._tag === "WebFetchError" ? String((error as { code: unknown }).code) : "request_failed";
      return { ok: false, code };
    }
  }
  async files(method: string, input: unknown): Promise<{ ok: true; value: unknown } | { ok: false; code: string }> {
    if (!FILE_METHODS.has(method)) return { ok: false, code: "invalid_path" };
    try {
      const call = this.#files[method as keyof WorkspaceFiles] as (input: unknown) => Promise<unknown>;
      // A signal does not cross RPC: the store's calls get one of their own (never aborted).
      const value = await call.call(this.#files, { ...(input !== null && typeof input === "object" ? input : {}), signal: new AbortController().signal });
      return { ok: true, value: value === undefined ? null : JSON.parse(JSON.stringify(value)) };
    } catch (error) {
      const code = (error as { _tag?: unknown; code?: unknown })._tag === "WorkspaceFileError" ? String((error as { code: unknown }).code) : "io";
      return { ok: false, code };
    }
  }
}

/** A running tool's context callbacks and its abort signal, for the isolate. */
class ToolBridge extends RpcTarget {
  readonly #context: ToolExecutionContext;
  readonly #finished: Promise<void>;
  #finish: () => void = () => {};
  constructor(context: ToolExecutionContext) {
    super();
    this.#context = context;
    this.#finished = new Promise((resolve) => (this.#finish = resolve));
  }
  /** Resolves true when the call's signal aborts, false once the call is over: the isolate aborts its own signal on true. */
  waitForAbort(): Promise<boolean> {
    const signal = this.#context.signal;
    if (signal.aborted) return Promise.resolve(true);
    return new Promise((resolve) => {
      const aborted = () => resolve(true);
      signal.addEventListener("abort", aborted, { once: true });
      void this.#finished.then(() => {
        signal.removeEventListener("abort", aborted);
        resolve(false);
      });
    });
  }
  /** The call is over (its result arrived, or the host stopped waiting). */
  finish(): void {
    this.#finish();
  }
  reportActivity(activity: Parameters<ToolExecutionContext["reportActivity"]>[0]) {
    return this.#context.reportActivity(activity);
  }
  askQuestion(questions: Parameters<ToolExecutionContext["askQuestion"]>[0]) {
    return this.#context.askQuestion(questions);
  }
  reportJournal(entry: Parameters<ToolExecutionContext["reportJournal"]>[0]) {
    return this.#context.reportJournal(entry);
  }
}

/** An isolate's failure as the host's error: a `PluginError` keeps its public message; a tagged one its `_tag` and `code`. */
function rethrow(error: Extract<Answer<unknown>, { ok: false }>["error"]): never {
  if (error.tag === "PluginError" || error.publicMessage !== undefined) {
    throw new PluginError({ message: error.message, ...(error.publicMessage !== undefined ? { publicMessage: error.publicMessage } : {}) });
  }
  throw Object.assign(new Error(error.message), { name: error.name, ...(error.tag !== undefined ? { _tag: error.tag } : {}), ...(error.code !== undefined ? { code: error.code } : {}) });
}

const unwrap = <T>(answer: Answer<T>): T => (answer.ok ? answer.value : rethrow(answer.error));

/**
 * The isolate's answer, or the signal's reason once it aborts: a cancelled Turn never waits on a
 * plugin that ignores its (bridged) signal; Core counts the call interrupted.
 */
function untilAborted<T>(answer: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const aborted = () => reject(signal.reason);
    signal.addEventListener("abort", aborted, { once: true });
    answer.then(
      (value) => (signal.removeEventListener("abort", aborted), resolve(value)),
      (error: unknown) => (signal.removeEventListener("abort", aborted), reject(error)),
    );
  });
}

const plain = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

const permissionContext = (context: ToolPermissionContext) => ({ sessionId: context.sessionId, turnId: context.turnId, workdir: context.workdir, toolCallId: context.toolCallId });

/**
 * The plugin value of the bundle `digest` (whose verified bytes are `source`): its `id` as the
 * bundle's default export declares it, and a `setup` bridged to the isolate.
 */
export async function bundlePlugin(loader: WorkerLoaderBinding, digest: string, source: string): Promise<{ readonly id: unknown; readonly setup: (context: PluginContext) => Promise<(() => Promise<void>) | undefined> }> {
  const entry = (): BundleEntrypoint =>
    loader
      .get(digest, async () => ({
        compatibilityDate: COMPATIBILITY_DATE,
        compatibilityFlags: ["nodejs_compat"],
        mainModule: "main.js",
        modules: { "main.js": PLUGIN_ISOLATE_MAIN, "plugin.js": source },
      }))
      .getEntrypoint("BundlePlugin") as BundleEntrypoint;
  const id = await entry().id();
  return {
    id,
    setup: async (context) => {
      const activation = plain(context.activation);
      const options = context.options;
      const caps = new HostTarget(context.workspaceFiles, context.webFetch);
      const described = unwrap(await entry().describe(activation, options, caps));
      const fingerprint = described.fingerprint;
      for (const tool of described.tools) {
        context.tools.register({
          id: tool.id,
          description: tool.description,
          inputSchema: tool.inputSchema,
          ...(tool.discoversWorkspaceInstructions === true ? { discoversWorkspaceInstructions: true as const } : {}),
          ...(tool.directOnly === true ? { directOnly: true as const } : {}),
          ...(tool.permissions
            ? { permissions: async (input: unknown, call: ToolPermissionContext) => unwrap(await untilAborted(entry().permissions(activation, options, caps, fingerprint, tool.id, input, permissionContext(call)), call.signal)) as never }
            : {}),
          execute: async (input: unknown, call: ToolExecutionContext) => {
            const bridge = new ToolBridge(call);
            try {
              return unwrap(await untilAborted(entry().execute(activation, options, caps, fingerprint, tool.id, input, { ...permissionContext(call), permissions: plain(call.permissions) }, bridge), call.signal)) as never;
            } finally {
              bridge.finish();
            }
          },
        } as ToolDeclaration<never>);
      }
      described.hooks.forEach((name, index) => {
        context.hooks.register(name as never, (async (input: unknown) => {
          const value = unwrap(await entry().hook(activation, options, caps, fingerprint, index, plain(input)));
          return value === null ? undefined : value;
        }) as never);
      });
      for (const skill of described.skills) context.skills.register(skill as never);
      for (const agent of described.agents) context.agents.register(agent as never);
      for (const agentId of described.defaults) context.agents.setDefault(agentId);
      if (!described.cleanup) return undefined;
      return async () => {
        unwrap(await entry().cleanup(activation, options, caps, fingerprint));
      };
    },
  };
}
