// The Node host's Session plugin service: the host-neutral overlays (session-overlays.ts) over
// the Node host's sources (session-sources.ts: `File`, `Package`, `Git`, `Static`; `Bundle` is a
// typed 503 here) and its artifact cache, which is pruned after every mutation and at start.
import type { ArtifactRecord, ArtifactSettings, SourceContext, StaticSessionPlugin } from "./session-sources.js";
import { artifactCacheEntry, loadArtifact, resolveSessionSource } from "./session-sources.js";
import { SessionPluginOverlays, type SessionPluginOverlayOptions, type SessionPluginSources } from "./session-overlays.js";

export { SessionPluginUnavailable, describeSource, type SessionPluginOverlayOptions, type SessionPluginSources, type TurnPluginLease } from "./session-overlays.js";
export type { GenerationLease } from "./runtime.js";

export interface SessionPluginServiceOptions extends Omit<SessionPluginOverlayOptions, "sources"> {
  /** Package sources resolve from here. */
  readonly projectDirectory: string;
  readonly staticPlugins?: ReadonlyMap<string, StaticSessionPlugin> | undefined;
  /** Where `Package` and `Git` sources install (default: session-sources.ts `defaultArtifactSettings`). */
  readonly artifacts?: ArtifactSettings | undefined;
  /** Another host's sources instead of the Node host's (tests). */
  readonly sources?: SessionPluginSources | undefined;
}

/** The Node host's sources: resolution and loading by session-sources.ts, pruning of `artifacts`' cache. */
export function nodeSessionSources(options: Pick<SessionPluginServiceOptions, "projectDirectory" | "staticPlugins" | "artifacts">): SessionPluginSources {
  const context: SourceContext = { projectDirectory: options.projectDirectory, staticPlugins: options.staticPlugins, ...(options.artifacts ? { artifacts: options.artifacts } : {}) };
  return {
    resolve: (source, declared) => resolveSessionSource(source, declared, context),
    load: (artifact) => loadArtifact(artifact as ArtifactRecord, context),
    prune: async (records) => {
      const cache = options.artifacts?.cache;
      if (!cache) return [];
      const referenced = new Set<string>();
      for (const record of records) {
        const entry = artifactCacheEntry(record as ArtifactRecord);
        if (entry !== undefined) referenced.add(entry);
      }
      return cache.prune(referenced);
    },
  };
}

export class SessionPluginService extends SessionPluginOverlays {
  constructor(options: SessionPluginServiceOptions) {
    super({ ...options, sources: options.sources ?? nodeSessionSources(options) });
  }
}
