// Per-project configuration: each Session gets the global `config.json` plus the project file
// nearest to ITS workdir (or the host's `--config` file, which replaces the project layer for
// every Session), never the file nearest to where the host started. A scope is that merged
// configuration and what derives from it — the agent and Skill catalogs, the plugin generation
// and the MCP servers — built lazily on the first Session or Turn in the project and cached by
// the project file's real path ("none" when no file applies). Before each use the files' content
// is compared with what the scope was built from: an edit rebuilds the scope at the next Turn
// (the replaced one closes its plugins and MCP servers once no running Turn leases it). A file
// that cannot be loaded fails that project's commands with the one-line config error naming the
// file (400 ValidationError), never a fallback to another configuration. Each Turn resolves its
// workdir's scope once, at its start (`acquire`); while Turns of a workdir run, a lookup for it
// (such as the Turn's own workspace recording) answers the scope the latest of them leased instead
// of looking for the files again — unless a later lookup found a change and replaced that scope.
//
// The host's own scope (global + the server root's project file or `--config`, + the inline
// config) stays what it is for host-wide things (providers, the model catalog, the sandbox, the
// runtime plugin and MCP routes) and serves every project whose files match it.
import { readFileSync, realpathSync, statSync, type Stats } from "node:fs";
import { dirname, resolve } from "node:path";
import { describeConfigError, findProjectConfig, globalConfigFile, loadConfig, type Config, type ConfigLayer, type Env, type LoadedConfig } from "../config/index.js";
import { validationFailure } from "../contract/failure.js";
import type { CommandSandbox } from "../sandbox/index.js";
import type { StorageHandle } from "../storage/index.js";
import type { SessionPluginArtifactOptions } from "../plugins/index.js";
import { loadHostCatalogs, type HostCatalogs } from "./catalogs.js";
import { HarnessStartupError } from "./errors.js";
import { prepareHostMcp, type HostMcp } from "./mcp-host.js";
import { pluginMcpServers, prepareHostPlugins, type HostPlugins } from "./plugin-host.js";

/** One project's configuration and the runtimes built from it. */
export interface ProjectScope {
  readonly config: Config;
  readonly layers: readonly ConfigLayer[];
  /** The file where `model` would be set (named when no model is configured). */
  readonly configFile: string;
  readonly catalogs: HostCatalogs;
  readonly plugins: HostPlugins;
  /** The scope's MCP servers (prepared on first use). */
  mcp(): Promise<HostMcp>;
  /** Stops the scope's plugins and MCP servers. */
  close(): Promise<void>;
}

export interface ProjectScopesOptions {
  readonly env: Env;
  readonly serverRoot: string;
  /** `--config`: the project layer of every Session (absolute or relative to the server root). */
  readonly configPath?: string | undefined;
  readonly inlineConfig?: unknown;
  /** The host's scope and the configuration it was loaded from (seeded, never closed here). */
  readonly host: { readonly scope: ProjectScope; readonly loaded: LoadedConfig };
  /** Builds a scope from a loaded configuration; `root` is the project directory (plugins resolve and are rooted there). Throws HarnessStartupError on a bad agent or MCP entry. */
  readonly build: (loaded: LoadedConfig, root: string) => Promise<ProjectScope>;
  readonly onWarning?: ((message: string) => void) | undefined;
}

interface Entry {
  readonly stamp: string;
  readonly scope: Promise<ProjectScope>;
  /** The host's own scope: closed by the host, not here. */
  readonly owned: boolean;
  leases: number;
  retired: boolean;
}

/**
 * A file's content read again only when its stat data changed (every Turn compares both files;
 * issue 21 §2). Stat data proves the content unchanged only when the file was last changed well
 * before it was read — git's racy-file rule: a write in the same clock tick as the read could
 * keep mtime, size and inode — so a file changed within RACY_MS of its reading is read again.
 */
const RACY_MS = 1_000;
const contents = new Map<string, { readonly stat: string; readonly changedMs: number; readonly readMs: number; readonly content: string }>();

/** What identifies a file's content: its bytes, or why it could not be read. */
function contentOf(file: string | undefined): string {
  if (file === undefined) return "-";
  let stat: Stats | undefined;
  try {
    stat = statSync(file, { throwIfNoEntry: false });
  } catch {
    stat = undefined;
  }
  const key = stat === undefined ? "" : `${stat.ino}:${stat.size}:${stat.mtimeMs}:${stat.ctimeMs}`;
  const known = contents.get(file);
  if (stat !== undefined && known !== undefined && known.stat === key && known.changedMs + RACY_MS < known.readMs) return known.content;
  const readMs = Date.now();
  let content: string;
  try {
    content = `${file}\n${readFileSync(file, "utf8")}`;
  } catch (error) {
    content = `${file}\n!${(error as NodeJS.ErrnoException).code ?? "unreadable"}`;
  }
  if (stat === undefined) contents.delete(file);
  else {
    if (contents.size >= 256) contents.clear();
    contents.set(file, { stat: key, changedMs: Math.max(stat.mtimeMs, stat.ctimeMs), readMs, content });
  }
  return content;
}

function realpathOr(file: string): string {
  try {
    // One system call (the JS realpath looks at each component in turn).
    return realpathSync.native(file);
  } catch {
    return resolve(file);
  }
}

export class ProjectScopes {
  private readonly entries = new Map<string, Entry>();
  /** Per workdir with running Turns: the entry the latest of them leased, and how many leases are held. */
  private readonly leased = new Map<string, { entry: Entry; count: number }>();
  private readonly explicit: string | undefined;
  /** The global file: the host's environment is fixed for its life. */
  private readonly globalFile: string;
  private closed = false;

  constructor(private readonly options: ProjectScopesOptions) {
    this.explicit = options.configPath !== undefined ? resolve(options.serverRoot, options.configPath) : undefined;
    this.globalFile = globalConfigFile(options.env);
    const hostFile = this.explicit ?? findProjectConfig(options.serverRoot);
    this.entries.set(this.keyOf(hostFile), {
      stamp: this.stampOf(options.host.loaded),
      scope: Promise.resolve(options.host.scope),
      owned: false,
      leases: 0,
      retired: false,
    });
  }

  /** The scope of a Session whose absolute workdir is `workdir`; rejects with a ValidationError naming a file that cannot be loaded. */
  async forWorkdir(workdir: string): Promise<ProjectScope> {
    const held = this.leased.get(workdir);
    if (held && !held.entry.retired) return held.entry.scope;
    return (await this.entry(workdir)).scope;
  }

  /** The scope for one running Turn: it stays open until `release` (an edit meanwhile replaces it for later Turns only). */
  async acquire(workdir: string): Promise<{ scope: ProjectScope; release: () => void }> {
    const entry = await this.entry(workdir);
    const scope = await entry.scope;
    entry.leases += 1;
    const held = this.leased.get(workdir);
    this.leased.set(workdir, { entry, count: (held?.count ?? 0) + 1 });
    let released = false;
    return {
      scope,
      release: () => {
        if (released) return;
        released = true;
        entry.leases -= 1;
        const current = this.leased.get(workdir);
        if (current && --current.count === 0) this.leased.delete(workdir);
        this.closeIfDone(entry);
      },
    };
  }

  /** Whether `scope` is the host's own (its MCP servers started with the host). */
  isHost(scope: ProjectScope): boolean {
    return scope === this.options.host.scope;
  }

  async close(): Promise<void> {
    this.closed = true;
    const entries = [...this.entries.values()];
    this.entries.clear();
    this.leased.clear();
    await Promise.all(entries.filter((entry) => entry.owned).map((entry) => entry.scope.then((scope) => scope.close(), () => undefined)));
  }

  private keyOf(file: string | undefined): string {
    return file === undefined ? "none" : realpathOr(file);
  }

  /** The project file that applies to `workdir`: `--config`, else the nearest `ze-harness.config.json`. */
  private fileFor(workdir: string): string | undefined {
    return this.explicit ?? findProjectConfig(workdir);
  }

  /** The content identity of the global file and the project file a configuration came from. */
  private stampOf(loaded: LoadedConfig | undefined, project?: string): string {
    const file = loaded ? loaded.layers.find((layer) => layer.scope === "project" || layer.scope === "explicit")?.file : project;
    return `${contentOf(this.globalFile)}\n\0${contentOf(file)}`;
  }

  private async entry(workdir: string): Promise<Entry> {
    if (this.closed) throw new Error("The host is closing");
    const file = this.fileFor(workdir);
    const key = this.keyOf(file);
    const stamp = this.stampOf(undefined, file);
    const current = this.entries.get(key);
    if (current && current.stamp === stamp) {
      await current.scope;
      return current;
    }
    const loaded = loadConfig({
      cwd: workdir,
      env: this.options.env,
      ...(this.explicit !== undefined ? { configFile: this.explicit } : {}),
      ...(this.options.inlineConfig !== undefined ? { inline: this.options.inlineConfig } : {}),
    });
    // Never a fallback: the project's commands fail, naming the file, until it is fixed.
    if (!loaded.ok) throw validationFailure(describeConfigError(loaded.error));
    const built = this.options.build(loaded.value, file !== undefined && this.explicit === undefined ? dirname(file) : workdir).catch((error: unknown) => {
      if (error instanceof HarnessStartupError) throw validationFailure(error.message);
      throw error;
    });
    const entry: Entry = { stamp, scope: built, owned: true, leases: 0, retired: false };
    // A concurrent caller that saw the same change shares this build.
    const raced = this.entries.get(key);
    if (raced !== current && raced?.stamp === stamp) {
      await raced.scope;
      return raced;
    }
    this.entries.set(key, entry);
    try {
      await built;
    } catch (error) {
      // A scope that could not be built is not kept: the next command tries again.
      if (this.entries.get(key) === entry) this.entries.delete(key);
      throw error;
    }
    if (current) {
      current.retired = true;
      this.closeIfDone(current);
    }
    return entry;
  }

  private closeIfDone(entry: Entry): void {
    if (!entry.owned || !entry.retired || entry.leases > 0) return;
    void entry.scope.then(
      (scope) => scope.close(),
      () => undefined,
    ).catch((error: unknown) => this.options.onWarning?.(`A replaced project configuration did not close cleanly: ${error instanceof Error ? error.message : String(error)}`));
  }
}

export interface ScopeDependencies {
  readonly storage: StorageHandle;
  readonly env: Env;
  readonly configPath?: string | undefined;
  readonly inlineConfig?: unknown;
  readonly inlinePlugins?: readonly unknown[] | undefined;
  readonly sessionPluginArtifacts?: SessionPluginArtifactOptions | undefined;
  readonly sandbox?: CommandSandbox | undefined;
  readonly runTurns: boolean;
  readonly reservedToolIds: readonly string[];
  /** `await` (an embedded host) or `background` (a server): see plugin-host.ts. */
  readonly startup: "await" | "background";
  readonly onRejected: (message: string) => void;
  readonly onWarning?: ((message: string) => void) | undefined;
}

/**
 * One scope's catalogs, plugins and MCP servers from its loaded configuration. The host's scope
 * (`eagerMcp`) prepares its MCP servers now, as a host always did; a project's scope on its first
 * Turn. A bad agent or MCP entry throws HarnessStartupError naming the file.
 */
export async function createProjectScope(deps: ScopeDependencies, loaded: LoadedConfig, root: string, eagerMcp: boolean): Promise<ProjectScope> {
  const { config, layers } = loaded;
  const plugins = await prepareHostPlugins({
    storage: deps.storage,
    serverRoot: root,
    env: deps.env,
    config,
    configPath: deps.configPath,
    inlineConfig: deps.inlineConfig,
    inlinePlugins: deps.inlinePlugins,
    sessionPluginArtifacts: deps.sessionPluginArtifacts,
    reservedToolIds: deps.reservedToolIds,
    // Loaded at once when configured; otherwise on the first plugin operation or the first
    // Turn of a Session with a plugin overlay (a plain one-shot `run` never loads the room).
    eager: false,
    startup: deps.startup,
    onRejected: deps.onRejected,
  });
  let catalogs: HostCatalogs;
  try {
    catalogs = loadHostCatalogs({
      config,
      layers,
      env: deps.env,
      warn: deps.onWarning,
      current: () => plugins.loaded()?.runtime.current.agentCatalog,
      pluginSkills: () => plugins.loaded()?.runtime.current.skills ?? [],
    });
  } catch (error) {
    await plugins.close();
    throw error;
  }
  let mcp: Promise<HostMcp> | undefined;
  const prepare = (): Promise<HostMcp> =>
    (mcp ??= prepareHostMcp({
      config,
      layers,
      env: deps.env,
      cwd: root,
      sandbox: deps.sandbox,
      runTurns: deps.runTurns,
      // A plugin's servers join at startup (when a background activation settles); a later
      // plugin reload does not restart MCP servers.
      pluginServers: plugins.activating() ? plugins.settled().then(() => pluginMcpServers(plugins)) : pluginMcpServers(plugins),
      onWarning: deps.onWarning,
    }));
  if (eagerMcp) {
    try {
      await prepare();
    } catch (error) {
      await plugins.close();
      throw error;
    }
  }
  return {
    config,
    layers,
    configFile: layers.at(-1)?.file ?? globalConfigFile(deps.env),
    catalogs,
    plugins,
    mcp: prepare,
    close: async () => {
      const prepared = await mcp?.catch(() => undefined);
      await prepared?.close();
      await plugins.close();
    },
  };
}
