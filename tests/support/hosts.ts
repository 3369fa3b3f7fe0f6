// One host fixture for the host-neutral API suites (issue 23): the same scenario runs against
// the Node host and against the Worker host in workerd, both over real HTTP with the generated
// client and every response (and SSE event) checked against the contract.
//
// - `node`: the composition `ze-harness serve` runs (`startServer`, in process: the same
//   harness, listener and connection admission, without a child process to spawn) on a
//   loopback port, over a real libSQL file in a temp home whose config.json names the
//   scripted model.
// - `worker`: the bundled Worker (`worker/index.ts`, bundled once per test process) in workerd
//   through miniflare, configured by `worker/miniflare.config.mjs`'s `workerOptions` (the
//   deployment's bindings) from Worker variables, in-memory Durable Object storage.
//
// One `HostOptions` object drives both: each field is mapped to the Node config key and to the
// Worker variable that the reference pairs with it. Start one host per file (`beforeAll`): a
// workerd start costs seconds.
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import type { Miniflare } from "miniflare";
import type { PermissionRule, ZeClient } from "../../clients/index.js";
import type { McpServer } from "../../services/config/types.js";
import { startServer } from "../../services/host/server.js";
import { startTestModel, type TestModel } from "../../tools/test-model/index.js";
// @ts-expect-error -- the deployment configuration is a plain .mjs module without types
import { workerOptions } from "../../worker/miniflare.config.mjs";
import { bundleOnce, miniflare } from "../worker/support.js";
import { networkClient, networkFetch, tempHome } from "./harness.js";
import { modelShortcuts, TEST_MODEL, testProviderConfig, writeGlobalConfig, type ModelShortcuts, type TestProtocol } from "./model.js";

export type HostKind = "node" | "worker";

/** For `describe.each(HOSTS)("… (%s host)", (kind) => …)`. */
export const HOSTS: readonly HostKind[] = ["node", "worker"];

export interface HostOptions {
  /** The scripted model's wire protocol (default chat). */
  readonly protocol?: TestProtocol;
  /** The scripted model's limits (default 200000 context, 8192 output units). */
  readonly limits?: { readonly contextUnits: number; readonly outputUnits: number };
  /** The Server permission scope: Node config `permissions`; Worker `HARNESS_PERMISSIONS`. */
  readonly permissions?: readonly PermissionRule[];
  /** Node config `permissionMatching.caseSensitive`; Worker `HARNESS_PERMISSION_CASE_SENSITIVE`. */
  readonly permissionCaseSensitive?: boolean;
  /** Node config `approval.timeoutMs`; Worker `HARNESS_APPROVAL_TIMEOUT_MS`. */
  readonly approvalTimeoutMs?: number | "unlimited";
  /** Node config `codemode.enabled`; Worker `HARNESS_CODEMODE_ENABLED`. */
  readonly codemode?: boolean;
  /** The host-configured MCP servers: Node config `mcp`; Worker `HARNESS_MCP` (a JSON array of the same entries). */
  readonly mcp?: readonly McpServer[];
}

type Fetch = (request: Request) => Promise<Response>;

/** A running host serving one server name, reached over HTTP: what a `ModelHarness` offers without its Node internals. */
export interface ModelHost extends ModelShortcuts {
  readonly kind: HostKind;
  /** The server name this view addresses (`local` for the first). */
  readonly server: string;
  /** The base URL of the host's listener. */
  readonly url: string;
  /** The generated client over the network, responses checked against the contract. */
  readonly api: ZeClient;
  /** The network fetch with contract checking, for raw requests (SSE). */
  readonly fetch: Fetch;
  /** The scripted model every server of this host uses. */
  readonly model: TestModel;
  /**
   * Another, empty server of the same kind with its own storage, using the same model: on Node a
   * second host (a Node host serves the one server `local`), on the Worker another server name (its
   * own Durable Object on the same Worker). Closed by this host's `close`.
   */
  otherServer(): Promise<ModelHost>;
  /**
   * This host with a `model` that counts from now: `requests` holds only the requests after this
   * call and `waitForRequest(n)` waits for the n-th of them; answers scripted before and not used are
   * dropped, unscripted requests get a short text. A per-test scripted model without restarting the host (the model's address is
   * part of the Worker's variables).
   */
  fresh(): ModelHost;
  close(): Promise<void>;
}

/** What a ModelHost and the in-process ModelHarness both offer: a suite's `h` that is one or the other. */
export type ModelApi = Pick<ModelHost, "api" | "fetch" | "model" | "createSession" | "submit" | "finish" | "close">;

/** The host's configuration as the Node host's config.json keys. */
export function nodeConfig(model: TestModel, options: HostOptions): Record<string, unknown> {
  return {
    model: TEST_MODEL,
    providers: testProviderConfig(model, options.protocol, options.limits),
    ...(options.permissions !== undefined ? { permissions: options.permissions } : {}),
    ...(options.permissionCaseSensitive !== undefined ? { permissionMatching: { caseSensitive: options.permissionCaseSensitive } } : {}),
    ...(options.approvalTimeoutMs !== undefined
      ? { approval: { timeoutMs: options.approvalTimeoutMs === "unlimited" ? { kind: "unlimited" } : { kind: "finite", value: options.approvalTimeoutMs } } }
      : {}),
    ...(options.codemode !== undefined ? { codemode: { enabled: options.codemode } } : {}),
    ...(options.mcp !== undefined ? { mcp: options.mcp } : {}),
  };
}

/** The same configuration as the Worker's variables (worker/config.ts). */
export function workerVariables(model: TestModel, options: HostOptions): Record<string, string> {
  return {
    HARNESS_PROVIDERS: JSON.stringify(testProviderConfig(model, options.protocol, options.limits)),
    HARNESS_MODEL: TEST_MODEL,
    ...(options.permissions !== undefined ? { HARNESS_PERMISSIONS: JSON.stringify(options.permissions) } : {}),
    ...(options.permissionCaseSensitive !== undefined ? { HARNESS_PERMISSION_CASE_SENSITIVE: String(options.permissionCaseSensitive) } : {}),
    ...(options.approvalTimeoutMs !== undefined ? { HARNESS_APPROVAL_TIMEOUT_MS: String(options.approvalTimeoutMs) } : {}),
    ...(options.codemode !== undefined ? { HARNESS_CODEMODE_ENABLED: String(options.codemode) } : {}),
    ...(options.mcp !== undefined ? { HARNESS_MCP: JSON.stringify(options.mcp) } : {}),
  };
}

/** `model` seen from now on (see `ModelHost.fresh`). */
function modelFromNow(model: TestModel): TestModel {
  const base = model.requests.length;
  model.discard();
  model.reply(() => ({ events: [{ type: "text", text: "unscripted" }] }));
  // The model's methods close over its state, so the view delegates to it by prototype.
  return Object.create(model, {
    requests: { get: () => model.requests.slice(base) },
    waitForRequest: { value: (count: number) => model.waitForRequest(base + count) },
  }) as TestModel;
}

function view(kind: HostKind, url: string, server: string, model: TestModel, otherServer: () => Promise<ModelHost>, close: () => Promise<void>): ModelHost {
  const api = networkClient(url);
  const host: ModelHost = {
    kind,
    server,
    url,
    api,
    fetch: networkFetch,
    model,
    ...modelShortcuts(api, server),
    otherServer,
    fresh: () => ({ ...host, model: modelFromNow(model) }),
    close,
  };
  return host;
}

async function startNode(model: TestModel, options: HostOptions, closeModel: boolean): Promise<ModelHost> {
  const home = tempHome("zh-host-node-");
  writeGlobalConfig(home, nodeConfig(model, options));
  let running: Awaited<ReturnType<typeof startServer>>;
  try {
    running = await startServer({ port: 0, hostname: "127.0.0.1", serverRoot: home.root, env: home.env, database: join(home.dir, "ze-harness.db") });
  } catch (error) {
    home.cleanup();
    throw error;
  }
  const others: ModelHost[] = [];
  return view(
    "node",
    running.url,
    "local",
    model,
    async () => {
      const other = await startNode(model, options, false);
      others.push(other);
      return {
        ...other,
        close: async () => {
          const index = others.indexOf(other);
          if (index < 0) return;
          others.splice(index, 1);
          await other.close();
        },
      };
    },
    async () => {
      for (const other of others.splice(0)) await other.close();
      await running.close();
      home.cleanup();
      if (closeModel) await model.close();
    },
  );
}

async function startWorker(model: TestModel, options: HostOptions): Promise<ModelHost> {
  const scriptPath = await bundleOnce("worker/index.ts");
  // The deployment's own bindings (both Durable Object classes, SQLite-backed), from variables only.
  const mf: Miniflare = miniflare(scriptPath, workerOptions({ scriptPath, port: 0, env: workerVariables(model, options) }));
  let url: string;
  try {
    url = (await mf.ready).origin;
  } catch (error) {
    await mf.dispose();
    throw error;
  }
  const close = async () => {
    await mf.dispose();
    await model.close();
  };
  const otherServer = async () => view("worker", url, `other-${randomUUID().slice(0, 8)}`, model, otherServer, async () => {});
  return view("worker", url, "local", model, otherServer, close);
}

/** Starts a host of `kind` with its own scripted model, configured by `options`. */
export async function startModelHost(kind: HostKind, options: HostOptions = {}): Promise<ModelHost> {
  const model = await startTestModel();
  try {
    return kind === "node" ? await startNode(model, options, true) : await startWorker(model, options);
  } catch (error) {
    await model.close();
    throw error;
  }
}
