// Markdown agents from the Worker's `/workspace` store: Node's agent catalog (services/workspace/
// agents.ts `loadAgentCatalog`, with its scan in agent-files.ts) over the store through its
// `AgentFileSystem` seam — the same IDs from relative paths, frontmatter options, body as the
// system prompt, precedence, best-effort skipping and refusals.
//
// Where: Node reads `<state directory>/agents` (`$XDG_DATA_HOME/ze-harness/agents`), the server
// user's data directory. A Worker server has no such directory: its one file system is the
// `/workspace` store, so its agents live in `/workspace/.ze-harness/agents` (beside the project
// `.ze-harness/skills`), `team/reviewer.md` defining `team/reviewer` as on Node.
//
// When: Node loads at startup and again on a runtime reload; the store changes while the object
// lives, so the catalog is read again at every use (each admission, Session creation, listing):
// an agent file a Turn writes applies from the next Turn on. A Turn keeps the catalog it started
// with.
//
// A bad file: malformed ones are skipped, as on Node. One that Node refuses (an unsupported
// option: `AgentConfigInvalid`) stops a Node host from starting; here the previous good catalog
// stays in use (Node's reload rule: the prior generation stays active) — at first the built-in
// agents — and every use of the agent that file declares, and the listing, is the typed 503
// `UnavailableError` `AgentConfigInvalid: <file>: <pointer>: <message>` (Node's startup refusal,
// worded the same). Other agents keep working, so a Turn can still repair the file.
//
// Plugins: a Session's Turns see the store's agents together with the host generation's plugin
// agents (server plugins) and their Session plugin's (`agents(layers)`), as Node's catalog
// layers them; a store file may patch a plugin agent too, and only narrow its rules.
//
// Permissions: Node's agent directory belongs to the server's user; this one is the model's own
// (a Turn writes it through `write`), and an agent's rules come last, so an `allow` (or `ask`)
// there would lift what HARNESS_PERMISSIONS denies. A store file may therefore only narrow: of
// the rules it adds, only `deny` ones apply (a built-in agent keeps its own rules first).
import { unavailable } from "../services/contract/failure.js";
import {
  describeAgentCatalogError,
  loadAgentCatalog,
  type AgentCatalog,
  type AgentCatalogError,
  type AgentDefinition,
  type AgentFileSystem,
  type PluginAgentLayer,
} from "../services/workspace/agents.js";
import { isWorkspaceFileError } from "../plugin/index.js";
import { workspacePath } from "./files/paths.js";
import type { WorkspaceFileStore } from "./files/store.js";

/** Where a Worker server's Markdown agents live. */
export const WORKSPACE_AGENTS_DIRECTORY = "/workspace/.ze-harness/agents";

function stored(store: WorkspaceFileStore, path: string) {
  try {
    return store.stat(workspacePath(path));
  } catch (error) {
    if (isWorkspaceFileError(error)) return undefined;
    throw error;
  }
}

/** The `/workspace` store as the agent scan's file system (no symbolic links exist there). */
export function storeAgentFiles(store: WorkspaceFileStore): AgentFileSystem {
  return {
    readdir: (path) => store.list(workspacePath(path)).map((entry) => entry.name),
    stat(path) {
      const entry = stored(store, path);
      return entry === undefined ? undefined : { isDirectory: () => entry.kind === "directory", isFile: () => entry.kind === "file" };
    },
    realpath: (path) => stored(store, path)?.path,
    // As readFileSync(…, "utf8"): malformed bytes become U+FFFD; the leading BOM is the scan's to drop.
    readText: (path) => new TextDecoder("utf-8", { ignoreBOM: true }).decode(store.readBytes(workspacePath(path))),
  };
}

const NOTHING: AgentFileSystem = { readdir: () => [], stat: () => undefined, realpath: () => undefined, readText: () => "" };

/** The plugin agent layers a catalog is built with: the host generation's, then a Session plugin's. */
export interface AgentLayers {
  readonly plugins?: PluginAgentLayer | undefined;
  readonly sessionPlugins?: PluginAgentLayer | undefined;
}

/** The server's agent catalog right now, with the given plugin layers (none: built-in and store agents). */
export type WorkspaceAgents = (layers?: AgentLayers) => AgentCatalog;

function load(files: AgentFileSystem, layers: AgentLayers = {}): ReturnType<typeof loadAgentCatalog> {
  return loadAgentCatalog({
    configLayers: [],
    env: {},
    markdown: { directory: WORKSPACE_AGENTS_DIRECTORY, files },
    ...(layers.plugins !== undefined ? { plugins: layers.plugins } : {}),
    ...(layers.sessionPlugins !== undefined ? { sessionPlugins: layers.sessionPlugins } : {}),
  });
}

/** `base`, except that the agent `error` names, and the listing, answer the typed refusal. */
function refusing(base: AgentCatalog, error: AgentCatalogError): AgentCatalog {
  const refuse = (): never => {
    throw unavailable(`${error._tag}: ${describeAgentCatalogError(error)}`);
  };
  const named = (id: string): boolean => id === error.agent;
  return Object.freeze({
    ...base,
    get: (id: string) => (named(id) ? refuse() : base.get(id)),
    primary: (id: string) => (named(id) ? refuse() : base.primary(id)),
    spawnable: (id: string) => (named(id) ? refuse() : base.spawnable(id)),
    toSessionAgentsResponse: refuse,
  });
}

/** `catalog` with each agent's store-added rules reduced to their `deny` ones (after the built-in or plugin agent's own rules). */
function denyOnly(catalog: AgentCatalog, builtins: AgentCatalog): AgentCatalog {
  const narrowed = new Map<AgentDefinition, AgentDefinition>();
  const narrow = (agent: AgentDefinition | undefined): AgentDefinition | undefined => {
    if (agent === undefined) return undefined;
    let done = narrowed.get(agent);
    if (done === undefined) {
      const own = builtins.get(agent.id)?.permissions.length ?? 0;
      const permissions = [...agent.permissions.slice(0, own), ...agent.permissions.slice(own).filter((rule) => rule.effect === "deny")];
      done = permissions.length === agent.permissions.length ? agent : Object.freeze({ ...agent, permissions: Object.freeze(permissions) });
      narrowed.set(agent, done);
    }
    return done;
  };
  return Object.freeze({
    ...catalog,
    get: (id: string) => narrow(catalog.get(id)),
    list: () => catalog.list().map((agent) => narrow(agent)!),
    primary: (id: string) => narrow(catalog.primary(id)),
    spawnable: (id: string) => narrow(catalog.spawnable(id)),
    subagents: () => catalog.subagents().map((agent) => narrow(agent)!),
    toSessionAgentsResponse: () => catalog.toSessionAgentsResponse(),
  });
}

/**
 * The server's current agent catalog, read from the store at each call, with the plugin layers
 * given (a Turn's host generation and Session plugin). The last good catalog is kept per layer.
 */
export function workspaceAgents(store: WorkspaceFileStore): WorkspaceAgents {
  const files = storeAgentFiles(store);
  const builtins = load(NOTHING);
  if (!builtins.ok) throw new Error(`the built-in agent catalog is invalid: ${builtins.error._tag}`);
  const none = {};
  /** Per layer (the Session plugin's, else the host generation's): the catalog without store files, and the last good one. */
  const kept = new WeakMap<object, { baseline: AgentCatalog; good: AgentCatalog }>();
  kept.set(none, { baseline: builtins.value, good: builtins.value });
  return (layers = {}) => {
    const key = layers.sessionPlugins ?? layers.plugins ?? none;
    let state = kept.get(key);
    if (state === undefined) {
      const baseline = load(NOTHING, layers);
      // The generations checked their layers when they activated; a clash here is a refusal, not a crash.
      if (!baseline.ok) throw unavailable(`${baseline.error._tag}: ${describeAgentCatalogError(baseline.error)}`);
      state = { baseline: baseline.value, good: baseline.value };
      kept.set(key, state);
    }
    const loaded = load(files, layers);
    if (!loaded.ok) return refusing(state.good, loaded.error);
    state.good = denyOnly(loaded.value, state.baseline);
    return state.good;
  };
}
