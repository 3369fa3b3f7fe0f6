// Session plugin sources on the Cloudflare Worker host (the seam `SessionPluginSources` of
// services/plugins/session-overlays.ts). `Bundle` sources load through a `worker_loaders` binding
// named `LOADER`, `Static` ones from the plugins an embedding host links in:
//
// - Resolution fetches the credential-free `https://` URL (bounded: MAX_BUNDLE_BYTES; redirects
//   followed one hop at a time, each URL checked before it is requested) and pins the SHA-256 of its bytes:
//   `integrity` `sha256:<hex>` and, unless declared, `version` `bundle-sha256:<hex>`. A declared
//   integrity that does not match is 409 `declared_mismatch`, before anything is stored. The bytes
//   are cached by digest in the object's SQLite (worker/plugins-cache.ts), owned by the Session
//   (its quota; a full pool leaves them uncached); the revision records `{ kind: "bundle", url, digest }`.
// - Loading takes the cached bytes (recovery after eviction needs no URL); a freed or uncached entry
//   is fetched again and must have the recorded digest, else the load fails until a refresh.
// - `Static` sources name a plugin of `WorkerHarnessHostOptions.staticSessionPlugins` by its
//   `sourceId` (`{ kind: "static", id, version }` is recorded; nothing is fetched or loaded at
//   runtime); without any, they are a typed unsupported capability (503).
// - `Package`, `File` and `Git` sources are a typed unsupported capability (503), as is `Bundle`
//   without `LOADER` (static-only).
//
// Test and development knob: `allowLoopbackHttp` (the Worker variable
// `HARNESS_PLUGIN_BUNDLE_LOOPBACK_HTTP=true`) also accepts `http://` URLs of a loopback host
// (127.0.0.0/8, `localhost`, `[::1]`), so a test serves its fixture bundle from a local server.
// Never set it in a deployment: it is no part of the reference.
import type { SessionPluginResolution, SessionPluginSource } from "../generated/client/types.gen.js";
import { readBounded } from "../services/contract/body.js";
import { conflict, unavailable, validationFailure } from "../services/contract/failure.js";
import type { SessionPluginSources, SessionSourceContext } from "../services/plugins/session-overlays.js";
import { PluginSourceError } from "../services/plugins/source-error.js";
import { MAX_BUNDLE_BYTES, PluginBundleCache, PluginCacheFull, sessionOwner } from "./plugins-cache.js";
import { bundlePlugin, type WorkerLoaderBinding } from "./plugins-loader.js";
import { checkBundleUrl } from "./plugins-url.js";

/** What a `Bundle` revision records: how to load and verify it again. */
export interface BundleArtifact {
  readonly kind: "bundle";
  readonly url: string;
  /** SHA-256 of the bytes, lowercase hex. */
  readonly digest: string;
}

/** A Session plugin an embedding host links in (`staticSessionPlugins`), addressed by a `Static` source's id. */
export interface WorkerStaticSessionPlugin {
  readonly pluginId: string;
  readonly version: string;
  /** The plugin definition object, as a Node plugin module exports it. */
  readonly plugin: unknown;
}

/** What a `Static` revision records. */
interface StaticArtifact {
  readonly kind: "static";
  readonly id: string;
  readonly version: string;
}

export interface WorkerSourceOptions {
  readonly cache: PluginBundleCache;
  /** The linked static Session plugins by source id; absent or empty, `Static` sources are unsupported. */
  readonly staticPlugins?: ReadonlyMap<string, WorkerStaticSessionPlugin> | undefined;
  /**
   * The digests a Session's add must not free of its own entries: every other recorded reference
   * (all Sessions' desired and active revisions but this Session's own desired one, and the server
   * list). Absent: nothing is freed before charging.
   */
  readonly keep?: ((sessionId: string) => Promise<ReadonlySet<string>>) | undefined;
  /** The `LOADER` binding; absent, the host is static-only and `Bundle` sources are unsupported. */
  readonly loader?: WorkerLoaderBinding | undefined;
  /** A test and development knob: loopback `http://` bundle URLs are accepted too. */
  readonly allowLoopbackHttp?: boolean | undefined;
  readonly fetch?: typeof fetch;
}

export const WORKER_SOURCE_UNSUPPORTED = (tag: string): string =>
  `${tag} plugin sources are an unsupported capability on the Cloudflare Worker host: add the plugin as a Bundle source (the https:// URL of a self-contained ES module)`;
export const STATIC_ONLY =
  "Bundle plugin sources are an unsupported capability on this Cloudflare Worker host: it has no worker_loaders binding named LOADER, so it is static-only";

export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>));
  return [...digest].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

const decoder = new TextDecoder("utf-8", { fatal: true });

/** Uncached bundles held in memory from an add to its activation. */
const HAND_OFF_ENTRIES = 4;

/** Redirect hops a bundle URL may take (as fetch's own limit). */
const MAX_REDIRECTS = 20;

/** The bundle's bytes at `url`, or a safe message why not. */
export async function downloadBundle(url: URL, options: { readonly fetch: typeof fetch; readonly allowLoopbackHttp: boolean; readonly signal?: AbortSignal }): Promise<{ ok: true; bytes: Uint8Array } | { ok: false; message: string }> {
  // Redirects are followed here, one hop at a time, so every URL is checked before it is
  // requested (workerd's "follow" would contact an internal http:// hop and show only the last).
  let response: Response;
  let at = url;
  for (let hops = 0; ; hops += 1) {
    try {
      response = await options.fetch(at.href, { redirect: "manual", headers: { accept: "text/javascript, application/javascript, */*" }, ...(options.signal !== undefined ? { signal: options.signal } : {}) });
    } catch (error) {
      return { ok: false, message: `The bundle at ${url.href} could not be fetched (${error instanceof Error ? error.name : "error"}).` };
    }
    if (![301, 302, 303, 307, 308].includes(response.status)) break;
    await response.body?.cancel().catch(() => undefined);
    const location = response.headers.get("location");
    let next: URL | undefined;
    try {
      next = location === null || hops >= MAX_REDIRECTS ? undefined : checkBundleUrl(new URL(location, at).href, options.allowLoopbackHttp);
    } catch {
      next = undefined;
    }
    if (next === undefined) return { ok: false, message: `The bundle at ${url.href} redirected to a URL this host does not fetch bundles from.` };
    at = next;
  }
  if (response.status !== 200) {
    await response.body?.cancel().catch(() => undefined);
    return { ok: false, message: `The bundle at ${url.href} answered HTTP ${response.status}.` };
  }
  let bytes: Uint8Array | "too_large";
  try {
    bytes = await readBounded(response.body, MAX_BUNDLE_BYTES);
  } catch (error) {
    return { ok: false, message: `The bundle at ${url.href} could not be read (${error instanceof Error ? error.name : "error"}).` };
  }
  if (bytes === "too_large") return { ok: false, message: `The bundle at ${url.href} is larger than ${MAX_BUNDLE_BYTES} bytes.` };
  return { ok: true, bytes };
}


export function workerSessionSources(options: WorkerSourceOptions): SessionPluginSources {
  const allowLoopbackHttp = options.allowLoopbackHttp === true;
  const doFetch = options.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => fetch(input, init));

  const download = (url: URL) => downloadBundle(url, { fetch: doFetch, allowLoopbackHttp });

  /** Caches a Session's bytes (its quota; a full pool leaves them uncached and the load fetches again). */
  const store = async (digest: string, bytes: Uint8Array, context: SessionSourceContext | undefined, adding: boolean): Promise<void> => {
    try {
      const owner = context !== undefined ? sessionOwner(context.sessionId) : undefined;
      // An add frees the Session's own stale entries before its quota is charged.
      const keep = context !== undefined && adding ? await options.keep?.(context.sessionId) : undefined;
      const put = options.cache.put(digest, bytes, { ...(owner !== undefined ? { owner } : {}), ...(keep !== undefined ? { keep } : {}) });
      if (put === "uncached" && adding) {
        // The activation right after this add loads these bytes without fetching them again.
        handOff.set(digest, bytes);
        while (handOff.size > HAND_OFF_ENTRIES) handOff.delete(handOff.keys().next().value!);
      }
    } catch (error) {
      if (error instanceof PluginCacheFull) throw unavailable(error.message, "storage_full");
      throw error;
    }
  };
  const statics = options.staticPlugins ?? new Map<string, WorkerStaticSessionPlugin>();
  /** Bytes an add left uncached (the Sessions' pool was full), for the activation that follows it. */
  const handOff = new Map<string, Uint8Array>();

  return {
    async resolve(source: SessionPluginSource, declared: SessionPluginResolution, context?: SessionSourceContext) {
      if (source._tag === "Static") return resolveStatic(statics, source.id, declared);
      if (source._tag !== "Bundle") throw unavailable(WORKER_SOURCE_UNSUPPORTED(source._tag));
      if (options.loader === undefined) throw unavailable(STATIC_ONLY);
      const url = checkBundleUrl(source.url, allowLoopbackHttp);
      const fetched = await download(url);
      if (!fetched.ok) throw validationFailure(fetched.message);
      const digest = await sha256Hex(fetched.bytes);
      const integrity = `sha256:${digest}`;
      if (declared.integrity !== undefined && declared.integrity !== integrity) {
        throw conflict(`declared_mismatch: the bundle resolved to integrity ${integrity}, not the declared ${declared.integrity}.`);
      }
      try {
        decoder.decode(fetched.bytes);
      } catch {
        throw validationFailure(`The bundle at ${url.href} is not UTF-8 text (an ES module).`);
      }
      await store(digest, fetched.bytes, context, true);
      const artifact: BundleArtifact = { kind: "bundle", url: url.href, digest };
      return { resolved: { pluginId: declared.pluginId, version: declared.version ?? `bundle-sha256:${digest}`, integrity }, artifact };
    },

    async load(record: object, context?: SessionSourceContext) {
      if ((record as Partial<StaticArtifact>).kind === "static") return loadStatic(statics, record as StaticArtifact);
      const artifact = record as Partial<BundleArtifact>;
      if (artifact.kind !== "bundle" || typeof artifact.url !== "string" || typeof artifact.digest !== "string") {
        throw new PluginSourceError("The revision records no artifact this Cloudflare Worker host can load.");
      }
      if (options.loader === undefined) throw new PluginSourceError(STATIC_ONLY);
      let bytes = options.cache.get(artifact.digest) ?? handOff.get(artifact.digest);
      handOff.delete(artifact.digest);
      if (bytes === undefined) {
        // A lost cache refetches and verifies the digest.
        const fetched = await download(checkBundleUrl(artifact.url, allowLoopbackHttp));
        if (!fetched.ok) throw new PluginSourceError(fetched.message);
        if ((await sha256Hex(fetched.bytes)) !== artifact.digest) {
          throw new PluginSourceError(`The bundle at ${artifact.url} changed since the revision was recorded and is no longer cached; refresh the Session plugin to adopt it.`);
        }
        bytes = fetched.bytes;
        // Cached again when it fits; a load never fails for want of cache space.
        await store(artifact.digest, bytes, context, false).catch(() => undefined);
      }
      return { value: await bundlePlugin(options.loader, artifact.digest, decoder.decode(bytes)) };
    },

    async prune(referenced: readonly object[]) {
      const keep = new Set<string>();
      for (const record of referenced) {
        const artifact = record as Partial<BundleArtifact>;
        if (artifact.kind === "bundle" && typeof artifact.digest === "string") keep.add(artifact.digest);
      }
      return options.cache.prune(keep);
    },
  };
}

const NO_STATIC = "Static plugin sources are unavailable: this host links no static Session plugins.";

function resolveStatic(statics: ReadonlyMap<string, WorkerStaticSessionPlugin>, id: string, declared: SessionPluginResolution) {
  if (statics.size === 0) throw unavailable(NO_STATIC);
  const entry = statics.get(id);
  if (entry === undefined) throw validationFailure(`This host links no static Session plugin ${JSON.stringify(id)}.`);
  if (entry.pluginId !== declared.pluginId) throw conflict(`declared_mismatch: static source ${id} provides plugin ${entry.pluginId}, not ${declared.pluginId}.`);
  if (declared.version !== undefined && declared.version !== entry.version) throw conflict(`declared_mismatch: static source ${id} is version ${entry.version}, not ${declared.version}.`);
  if (declared.integrity !== undefined) throw conflict(`declared_mismatch: static source ${id} has no integrity, not the declared ${declared.integrity}.`);
  const artifact: StaticArtifact = { kind: "static", id, version: entry.version };
  return Promise.resolve({ resolved: { pluginId: entry.pluginId, version: entry.version }, artifact });
}

async function loadStatic(statics: ReadonlyMap<string, WorkerStaticSessionPlugin>, artifact: StaticArtifact) {
  const entry = statics.get(artifact.id);
  if (entry === undefined || entry.version !== artifact.version) throw new PluginSourceError(`The static Session plugin ${artifact.id}@${artifact.version} is no longer linked into this host.`);
  return { value: entry.plugin };
}
