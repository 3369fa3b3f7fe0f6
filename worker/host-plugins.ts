// Server plugins for embedding hosts (the reference's "Server plugins (embedding hosts)"): a list
// of `Bundle` plugins loaded into every Session of the object through the host generation — the
// embedder's counterpart of the Node config file's `plugins`. The embedder owns and persists the
// list (`WorkerHarnessHostOptions.serverPlugins`, `host.setServerPlugins(entries)`); this module
// resolves, loads and reports it (`host.serverPlugins()`).
//
// - Each entry names a bundle URL (the `Bundle` source rules of worker/plugins-sources.ts) and the
//   plugin id its default export must declare, with an optional `integrity: 'sha256:<hex>'` pin and
//   `options`. Resolution fetches it and pins the SHA-256 of its bytes, cached by digest in the
//   object's SQLite under the server's own owner (worker/plugins-cache.ts: counted against no
//   Session's quota or pool). An entry that cannot resolve or load (a bad URL, an unreachable or
//   mismatching bundle, another plugin id, a failing setup) is reported `failed` and left out of
//   the generation: it never blocks the server.
// - The list is a host generation (services/plugins/runtime.ts): its id carries a digest of the
//   loaded list (`host-<n>-<digest>`), so a changed list is a distinct generation. New Sessions get
//   it immediately and existing ones on their next Turn (a Turn keeps the one it started with);
//   Session plugins rebuild on the new baseline (SessionPluginOverlays).
// - `setServerPlugins` replaces the list, resolving every entry afresh, and reloads the host
//   generation. It is refused with `WorkerServerPluginConflict` while any Session runs (or is
//   activating) one of the plugin ids as its own Session plugin, so a server plugin never shadows
//   a Session's copy; a new generation that does not activate is `WorkerServerPluginRejected`.
//   Either way the previous list stays active. Calls run one at a time.
// - The activated list and its pins are recorded (`worker_server_plugin`): a wake given the same
//   list loads the pinned bytes from the cache without fetching; a lost entry is fetched again and
//   must still have the pinned digest.
import { createHash } from "node:crypto";
import type { RuntimePlugin } from "../generated/client/types.gen.js";
import type { JsonObject } from "../plugin/index.js";
import type { PluginCandidate } from "../services/plugins/activate.js";
import { isIdentifier, isRecord, jsonProblem } from "../services/plugins/checks.js";
import type { RuntimeSource } from "../services/plugins/runtime.js";
import { PluginSourceError } from "../services/plugins/source-error.js";
import { SERVER_OWNER, type PluginBundleCache, type StoredServerPlugin } from "./plugins-cache.js";
import { bundlePlugin, type WorkerLoaderBinding } from "./plugins-loader.js";
import { downloadBundle, sha256Hex, STATIC_ONLY, type WorkerStaticSessionPlugin } from "./plugins-sources.js";
import { checkBundleUrl } from "./plugins-url.js";

/** One server plugin as the embedder lists it. */
export interface WorkerServerPluginEntry {
  /** The credential-free `https://` URL of a self-contained ES module. */
  readonly url: string;
  /** The plugin id the bundle's default export must declare. */
  readonly pluginId: string;
  /** `sha256:<hex>`: the bytes the URL must answer. */
  readonly integrity?: string;
  readonly options?: JsonObject;
}

/** One server plugin as the host reports it. */
export interface WorkerServerPluginStatus {
  readonly url: string;
  readonly pluginId: string;
  /** The pinned integrity (`sha256:<hex>` of the loaded bytes), once resolved. */
  readonly integrity?: string;
  readonly state: "active" | "failed";
  /** Why it is `failed`. */
  readonly error?: string;
}

/** `setServerPlugins` while a Session runs one of the ids as its own Session plugin; the previous list stays. */
export class WorkerServerPluginConflict extends Error {
  readonly _tag = "WorkerServerPluginConflict" as const;
  override readonly name = "WorkerServerPluginConflict";
  constructor(
    message: string,
    /** The plugin ids Sessions run as their own. */
    readonly pluginIds: readonly string[],
  ) {
    super(message);
  }
}

/** The new list's generation did not activate (or the list is malformed); the previous list stays. */
export class WorkerServerPluginRejected extends Error {
  readonly _tag = "WorkerServerPluginRejected" as const;
  override readonly name = "WorkerServerPluginRejected";
  constructor(
    message: string,
    /** Each entry's state in the rejected generation, when it got that far. */
    readonly plugins: readonly WorkerServerPluginStatus[] = [],
  ) {
    super(message);
  }
}

const INTEGRITY = /^sha256:[0-9a-f]{64}$/;
/** How long one server plugin's bundle may take to download. */
export const SERVER_PLUGIN_FETCH_TIMEOUT_MS = 30_000;
const decoder = new TextDecoder("utf-8", { fatal: true });

/** An entry after resolution: its pin and bytes, or why it cannot load. */
interface ResolvedEntry {
  readonly url: string;
  readonly pluginId: string;
  readonly integrity: string | undefined;
  readonly options: JsonObject;
  /** The entry as recorded (compared at the next wake). */
  readonly key: string;
  readonly digest?: string;
  readonly bytes?: Uint8Array;
  readonly failure?: string;
}

export interface ServerPluginListOptions {
  readonly cache: PluginBundleCache;
  readonly loader: WorkerLoaderBinding | undefined;
  readonly allowLoopbackHttp: boolean;
  readonly fetch?: typeof fetch;
}

/** The checked shape of the list, or why it is malformed (names the index, never a value). */
export function checkServerPluginList(entries: unknown): readonly WorkerServerPluginEntry[] | string {
  if (!Array.isArray(entries)) return "must be an array of { url, pluginId, integrity?, options? }";
  for (const [index, entry] of entries.entries()) {
    if (!isRecord(entry) || typeof entry["url"] !== "string" || typeof entry["pluginId"] !== "string") return `[${index}] must be { url, pluginId, integrity?, options? } with string url and pluginId`;
    if (entry["integrity"] !== undefined && typeof entry["integrity"] !== "string") return `[${index}].integrity must be a string`;
    if (entry["options"] !== undefined && (!isRecord(entry["options"]) || jsonProblem(entry["options"]) !== undefined)) return `[${index}].options must be a JSON object`;
  }
  const ids = entries.map((entry: WorkerServerPluginEntry) => entry.pluginId);
  const twice = ids.find((id, index) => ids.indexOf(id) !== index);
  if (twice !== undefined) return `lists plugin ${JSON.stringify(twice)} twice`;
  return entries as WorkerServerPluginEntry[];
}

export class ServerPluginList {
  #active: readonly ResolvedEntry[] = [];
  /** The list reported: the active one, or a first list at wake whose generation did not activate (every entry failed). */
  #reported: readonly ResolvedEntry[] = [];
  /** The list a reload in progress activates. */
  #pending: readonly ResolvedEntry[] | undefined;
  /** The cache holds on the bytes stored by `resolve`, released once `activate` has recorded (or dropped) the list. */
  #holds: (() => void)[] = [];

  constructor(private readonly options: ServerPluginListOptions) {}

  /** The host generation's source: the pending list while a reload runs, else the active one. */
  readonly source = (): RuntimeSource => {
    const list = this.#pending ?? this.#active;
    return { ok: true, candidates: list.map((entry) => this.#candidate(entry)), ...(list.length > 0 ? { revision: listDigest(list) } : {}) };
  };

  /** Resolves `entries` for a reload (`reuse`: a wake, whose recorded pins load without fetching). */
  async resolve(entries: readonly WorkerServerPluginEntry[], reuse: boolean): Promise<readonly ResolvedEntry[]> {
    const recorded = reuse ? this.options.cache.serverPlugins() : [];
    return Promise.all(entries.map((entry, index) => this.#resolve(entry, recorded[index])));
  }

  /**
   * Runs `reload` with `list` as the source; keeps it when `reload` says it activated. `first`: the
   * wake's list, reported (all failed) even when its generation did not activate.
   */
  async activate<T>(list: readonly ResolvedEntry[], reload: () => Promise<{ activated: boolean; value: T }>, first = false): Promise<T> {
    this.#pending = list;
    try {
      const result = await reload();
      if (first) this.#reported = list;
      if (result.activated) {
        this.#active = list;
        this.#reported = list;
        this.options.cache.recordServerPlugins(list.map((entry): StoredServerPlugin => ({ entry: entry.key, digest: entry.digest })));
      }
      return result.value;
    } finally {
      this.#pending = undefined;
      for (const release of this.#holds.splice(0)) release();
    }
  }

  /** The plugin ids of the active list. */
  pluginIds(): string[] {
    return this.#active.map((entry) => entry.pluginId);
  }

  /** Each entry of `list` (default: the reported one) with its state in `plugins` (the generation's statuses, in list order). */
  statuses(plugins: readonly RuntimePlugin[], list: readonly ResolvedEntry[] = this.#reported): WorkerServerPluginStatus[] {
    return list.map((entry, index) => {
      const status = plugins[index];
      const active = entry.failure === undefined && status?.status === "active";
      const error = entry.failure ?? status?.error ?? (active ? undefined : "Not activated.");
      return {
        url: entry.url,
        pluginId: entry.pluginId,
        ...(entry.digest !== undefined ? { integrity: `sha256:${entry.digest}` } : {}),
        state: active ? "active" : "failed",
        ...(!active && error !== undefined ? { error } : {}),
      };
    });
  }

  async #resolve(entry: WorkerServerPluginEntry, recorded: StoredServerPlugin | undefined): Promise<ResolvedEntry> {
    const options = entry.options ?? {};
    const key = JSON.stringify({ url: entry.url, pluginId: entry.pluginId, integrity: entry.integrity ?? null, options });
    const base = { url: entry.url, pluginId: entry.pluginId, integrity: entry.integrity, options, key };
    const failed = (failure: string): ResolvedEntry => ({ ...base, failure });
    if (!isIdentifier(entry.pluginId)) return failed(`${JSON.stringify(String(entry.pluginId).slice(0, 140))} is not a plugin id.`);
    if (entry.integrity !== undefined && !INTEGRITY.test(entry.integrity)) return failed("integrity must be sha256:<64 lowercase hex digits>.");
    if (this.options.loader === undefined) return failed(STATIC_ONLY);
    let url: URL;
    try {
      url = checkBundleUrl(entry.url, this.options.allowLoopbackHttp);
    } catch (error) {
      return failed(error instanceof Error ? error.message : "The URL is not one this host fetches bundles from.");
    }
    // Bounded in time: a URL that never answers fails its entry instead of holding the wake.
    const fetchBundle = () =>
      downloadBundle(url, {
        fetch: this.options.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => fetch(input, init)),
        allowLoopbackHttp: this.options.allowLoopbackHttp,
        signal: AbortSignal.timeout(SERVER_PLUGIN_FETCH_TIMEOUT_MS),
      });
    // A wake with the same entry: the pinned bytes, from the cache or fetched again and verified.
    if (recorded !== undefined && recorded.entry === key && recorded.digest !== undefined) {
      const cached = this.options.cache.get(recorded.digest);
      if (cached !== undefined) return { ...base, digest: recorded.digest, bytes: cached };
      const fetched = await fetchBundle();
      if (!fetched.ok) return { ...failed(fetched.message), digest: recorded.digest };
      if ((await sha256Hex(fetched.bytes)) !== recorded.digest) {
        return { ...failed(`The bundle at ${url.href} changed since it was pinned and is no longer cached; set the server plugins again to adopt it.`), digest: recorded.digest };
      }
      this.#store(recorded.digest, fetched.bytes);
      return { ...base, digest: recorded.digest, bytes: fetched.bytes };
    }
    const fetched = await fetchBundle();
    if (!fetched.ok) return failed(fetched.message);
    const digest = await sha256Hex(fetched.bytes);
    if (entry.integrity !== undefined && entry.integrity !== `sha256:${digest}`) return failed(`declared_mismatch: the bundle resolved to integrity sha256:${digest}, not the declared ${entry.integrity}.`);
    try {
      decoder.decode(fetched.bytes);
    } catch {
      return failed(`The bundle at ${url.href} is not UTF-8 text (an ES module).`);
    }
    this.#store(digest, fetched.bytes);
    return { ...base, digest, bytes: fetched.bytes };
  }

  #store(digest: string, bytes: Uint8Array): void {
    // Until the list is recorded (activate) its new bytes are pinned by nothing: a Session's plugin
    // change pruning the cache meanwhile would free them, and a wake would need the URL again.
    this.#holds.push(this.options.cache.hold(digest));
    // Best effort: the bytes are held in memory for this generation either way.
    try {
      this.options.cache.put(digest, bytes, { owner: SERVER_OWNER });
    } catch {
      // Too large for the cache; the download bound already refused such bytes.
    }
  }

  #candidate(entry: ResolvedEntry): PluginCandidate {
    return {
      source: entry.url,
      options: entry.options,
      load: async () => {
        if (entry.failure !== undefined || entry.bytes === undefined || entry.digest === undefined || this.options.loader === undefined) throw new PluginSourceError(entry.failure ?? "The bundle was not resolved.");
        const value = await bundlePlugin(this.options.loader, entry.digest, decoder.decode(entry.bytes));
        if (value.id !== entry.pluginId) throw new PluginSourceError(`The bundle declares plugin ${JSON.stringify(value.id)}, not ${JSON.stringify(entry.pluginId)}.`);
        return { value };
      },
    };
  }
}

/** A digest of the list as loaded (each entry's URL, plugin id, pin and options): 16 hex digits. */
function listDigest(list: readonly ResolvedEntry[]): string {
  const loaded = list.map((entry) => ({ url: entry.url, pluginId: entry.pluginId, digest: entry.digest ?? null, failed: entry.failure !== undefined, options: entry.options }));
  return createHash("sha256").update(JSON.stringify(loaded)).digest("hex").slice(0, 16);
}

/** The plugin part of `WorkerHarnessHostOptions`. */
export interface WorkerHostPluginOptions {
  /** Runtime plugins: the `worker_loaders` binding (`{ loader: env.LOADER }`); absent, `env.LOADER` if bound, else static-only. */
  readonly dynamicPlugins?: { readonly loader?: WorkerLoaderBinding | undefined };
  /** Session plugins linked at build time, added by a `{ _tag: 'Static', id: sourceId }` source. */
  readonly staticSessionPlugins?: readonly WorkerStaticSessionPluginEntry[];
  /** Bundles loaded into every Session through the host generation; the embedder persists the list. */
  readonly serverPlugins?: readonly WorkerServerPluginEntry[];
}

/** A Session plugin an embedding host links in at build time (`staticSessionPlugins`). */
export interface WorkerStaticSessionPluginEntry {
  /** The id a `{ _tag: 'Static', id }` source names. */
  readonly sourceId: string;
  readonly pluginId: string;
  readonly version: string;
  /** The plugin definition object, as a Node plugin module exports it (`{ id, setup }`). */
  readonly plugin: unknown;
}

/** The host's plugin options checked: the static plugins by source id and the server list, or a refusal naming the option. */
export function checkHostPluginOptions(options: {
  readonly staticSessionPlugins?: readonly WorkerStaticSessionPluginEntry[] | undefined;
  readonly serverPlugins?: readonly WorkerServerPluginEntry[] | undefined;
}): { readonly ok: true; readonly staticPlugins: ReadonlyMap<string, WorkerStaticSessionPlugin>; readonly serverPlugins: readonly WorkerServerPluginEntry[] } | { readonly ok: false; readonly tag: "ConfigInvalid"; readonly message: string } {
  const invalid = (option: string, message: string) => ({ ok: false as const, tag: "ConfigInvalid" as const, message: `WorkerHarnessHost option ${option}: ${message}` });
  const statics = new Map<string, WorkerStaticSessionPlugin>();
  const given: unknown = options.staticSessionPlugins ?? [];
  if (!Array.isArray(given)) return invalid("staticSessionPlugins", "must be an array of { sourceId, pluginId, version, plugin }");
  for (const [index, entry] of given.entries()) {
    if (!isRecord(entry) || typeof entry["sourceId"] !== "string" || entry["sourceId"] === "" || typeof entry["version"] !== "string" || entry["version"] === "") {
      return invalid(`staticSessionPlugins[${index}]`, "must be { sourceId, pluginId, version, plugin } with a non-empty sourceId and version");
    }
    if (!isIdentifier(entry["pluginId"])) return invalid(`staticSessionPlugins[${index}].pluginId`, "is not a plugin id");
    const plugin = entry["plugin"];
    if (!isRecord(plugin) || typeof plugin["setup"] !== "function" || plugin["id"] !== entry["pluginId"]) return invalid(`staticSessionPlugins[${index}].plugin`, "must be a plugin definition ({ id, setup }) whose id is pluginId");
    if (statics.has(entry["sourceId"])) return invalid(`staticSessionPlugins[${index}].sourceId`, "is listed twice");
    statics.set(entry["sourceId"], { pluginId: entry["pluginId"], version: entry["version"], plugin });
  }
  const list = checkServerPluginList(options.serverPlugins ?? []);
  if (typeof list === "string") return invalid("serverPlugins", list);
  return { ok: true, staticPlugins: statics, serverPlugins: list };
}
