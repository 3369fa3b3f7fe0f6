// One plugin's activation: load its value, check it is a plugin, run `setup(context)` under a
// time limit with a fresh context whose `register` calls collect contributions, then check every
// contribution in full. Nothing is applied here: the generation (generation.ts) takes what an
// activation returns, so rolling a plugin back is dropping its result and running its cleanup.
//
// Failures have a severity. `skip`: the host leaves the plugin out, reports it failed, and goes
// on (a `PluginError` with a `publicMessage` from setup; a rejected tool or journal kind; and, by
// default, any other setup throw, a setup timeout, a module that cannot load or does not load in
// time). `fatal`: the
// whole activation fails (an unknown hook name, a malformed Agent, Skill, source, transform, MCP
// server or model, a bad setup return value; any setup failure under `failClosed`). In a Session
// scope every failure is fatal.
import type { JsonObject, PluginActivation, PluginCleanup, PluginContext, ToolDeclaration } from "../../plugin/index.js";
import { PluginError } from "../../plugin/index.js";
import { HOOK_NAMES, isHookName, type HookName } from "./hooks.js";
import type { HostCapabilities } from "./capabilities.js";
import { copyJson, hasTag, isIdentifier, isRecord, publicMessageOf } from "./checks.js";
import { checkAgent, checkSkill, checkSkillSource, checkSkillTransform, type Checked } from "./declarations.js";
import { checkJournalKind, type JournalKind } from "./journal.js";
import { checkMcpServer, checkModel } from "./mcp-model.js";
import { PluginSourceError } from "./source-error.js";
import { RESERVED_TOOL_IDS, checkToolDeclaration } from "./tool-declaration.js";

/** Default limit on one plugin's `setup`. */
export const DEFAULT_SETUP_TIMEOUT_MS = 30_000;
/** Longest setup failure message kept (the reference's bound for a setup `publicMessage`). */
export const MAX_SETUP_MESSAGE_CHARS = 512;

/** What loading a candidate gives: the plugin value (a module's default export, or an inline object). */
export interface LoadedPlugin {
  readonly value: unknown;
  /** The npm package's version, for a package source. */
  readonly packageVersion?: string | undefined;
}

/** A plugin to activate: its source (for status), options, and how to get its value. */
export interface PluginCandidate {
  readonly source: string;
  readonly options: JsonObject;
  /** Rejects when the plugin cannot be loaded (a `PluginSourceError` says why in safe words). */
  readonly load: () => Promise<LoadedPlugin>;
}

/** Everything one plugin registered, checked. */
export interface Contributions {
  readonly tools: readonly ToolDeclaration<never>[];
  readonly agents: readonly NonNullable<Extract<ReturnType<typeof checkAgent>, { ok: true }>["value"]>[];
  readonly defaultAgent?: string | undefined;
  readonly skills: readonly Extract<ReturnType<typeof checkSkill>, { ok: true }>["value"][];
  readonly skillSources: readonly Extract<ReturnType<typeof checkSkillSource>, { ok: true }>["value"][];
  readonly transforms: readonly Extract<ReturnType<typeof checkSkillTransform>, { ok: true }>["value"][];
  readonly mcpServers: readonly Extract<ReturnType<typeof checkMcpServer>, { ok: true }>["value"][];
  readonly models: readonly Extract<ReturnType<typeof checkModel>, { ok: true }>["value"][];
  readonly journalKinds: readonly JournalKind[];
  readonly hooks: readonly { readonly name: HookName; readonly handler: (input: never) => unknown }[];
  readonly subscribers: readonly ((event: never) => unknown)[];
}

export interface ActivatedPlugin {
  readonly pluginId: string;
  readonly packageVersion?: string | undefined;
  readonly contributions: Contributions;
  readonly cleanup?: PluginCleanup | undefined;
}

export type Severity = "skip" | "fatal";

export type ActivationResult =
  | { readonly ok: true; readonly plugin: ActivatedPlugin }
  | { readonly ok: false; readonly severity: Severity; readonly message: string; readonly pluginId?: string | undefined };

export interface ActivateOptions {
  readonly activation: PluginActivation;
  readonly capabilities: HostCapabilities;
  readonly timeoutMs?: number | undefined;
  /** Reference behaviour: only a self-described (`publicMessage`) setup failure skips a host plugin. */
  readonly failClosed?: boolean | undefined;
  /** Ids of composed native model providers (a plugin model may not use them). */
  readonly nativeProviders?: ReadonlySet<string> | undefined;
  /** The revision's id: a plugin Skill's source version. */
  readonly sourceVersion: string;
  /** Full errors for the host's log (never shown to clients). */
  readonly onDiagnostic?: ((source: string, error: unknown) => void) | undefined;
}

interface Raw {
  tools: unknown[];
  agents: unknown[];
  defaults: unknown[];
  skills: unknown[];
  sources: unknown[];
  transforms: unknown[];
  mcp: unknown[];
  models: unknown[];
  kinds: unknown[];
  hooks: { name: unknown; handler: unknown }[];
  subscribers: unknown[];
}

const timedOut = Symbol("timed out");

/** `work`'s value, or {@link timedOut} once `ms` passed (the work itself cannot be stopped; its late result is the caller's to handle). */
async function withDeadline<T>(work: Promise<T>, ms: number): Promise<T | typeof timedOut> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<typeof timedOut>((done) => {
    timer = setTimeout(() => done(timedOut), ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

function describeLoadFailure(error: unknown): string {
  if (error instanceof PluginSourceError) return error.message;
  const name = error instanceof Error && /^[A-Za-z]+$/.test(error.name) ? error.name : "Error";
  return `The plugin module could not be loaded (${name}).`;
}

async function runCleanup(cleanup: unknown, source: string, onDiagnostic: ActivateOptions["onDiagnostic"]): Promise<void> {
  if (typeof cleanup !== "function") return;
  try {
    await (cleanup as PluginCleanup)();
  } catch (error) {
    onDiagnostic?.(source, error);
  }
}

/** A context whose registrations land in `raw` until `close()`; afterwards every register throws. */
function createContext(raw: Raw, options: JsonObject, settings: ActivateOptions): { context: PluginContext; close(): void } {
  let open = true;
  const collect =
    <T>(into: T[], what: string, shape: (value: unknown) => boolean) =>
    (value: unknown): void => {
      if (!open) throw new PluginError({ message: `Cannot register a ${what} after setup settled.` });
      if (!shape(value)) throw new PluginError({ message: `Invalid ${what} declaration.` });
      into.push(value as T);
    };
  const withId = (value: unknown) => isRecord(value) && typeof value["id"] === "string";
  const context: PluginContext = {
    activation: settings.activation,
    options: copyJson(options),
    fetch: globalThis.fetch.bind(globalThis),
    workspaceFiles: settings.capabilities.workspaceFiles,
    workspaceShell: settings.capabilities.workspaceShell,
    webFetch: settings.capabilities.webFetch,
    tools: { register: collect(raw.tools, "tool", withId) },
    agents: { register: collect(raw.agents, "Agent", withId), setDefault: collect(raw.defaults, "default Agent", (value) => typeof value === "string") },
    skills: {
      register: collect(raw.skills, "Skill", withId),
      registerSource: collect(raw.sources, "Skill source", withId),
      registerTransform: collect(raw.transforms, "Skill transform", withId),
    },
    mcp: { register: collect(raw.mcp, "MCP server", withId) },
    models: { register: collect(raw.models, "model", (value) => isRecord(value) && typeof value["providerId"] === "string" && typeof value["modelId"] === "string") },
    journal: { registerKind: collect(raw.kinds, "journal kind", (value) => isRecord(value) && typeof value["kind"] === "string") },
    hooks: {
      register: (name, handler) => {
        if (!open) throw new PluginError({ message: "Cannot register a hook after setup settled." });
        raw.hooks.push({ name, handler });
      },
    },
    events: { subscribe: collect(raw.subscribers, "event subscriber", (value) => typeof value === "function") },
  };
  return {
    context: Object.freeze(context),
    close: () => {
      open = false;
    },
  };
}

/** Checks each list with `check`; the first problem fails with `severity`. */
function checkAll<T>(items: readonly unknown[], check: (item: unknown) => Checked<T>): Checked<T[]> {
  const out: T[] = [];
  for (const item of items) {
    const checked = check(item);
    if (!checked.ok) return checked;
    out.push(checked.value);
  }
  return { ok: true, value: out };
}

function duplicate(values: readonly string[]): string | undefined {
  const seen = new Set<string>();
  for (const value of values) {
    if (seen.has(value)) return value;
    seen.add(value);
  }
  return undefined;
}

/** Checks the collected registrations of plugin `pluginId`. */
function checkContributions(raw: Raw, pluginId: string, settings: ActivateOptions): { ok: true; value: Contributions } | { ok: false; severity: Severity; message: string } {
  const skip = (message: string) => ({ ok: false as const, severity: "skip" as const, message });
  const fatal = (message: string) => ({ ok: false as const, severity: "fatal" as const, message });
  // Tools and journal kinds degrade like a self-described setup failure.
  const tools = checkAll(raw.tools, checkToolDeclaration);
  if (!tools.ok) return skip(`Tool rejected: ${tools.message}.`);
  const reserved = tools.value.find((tool) => RESERVED_TOOL_IDS.includes(tool.id));
  if (reserved) return skip(`Tool rejected: ${JSON.stringify(reserved.id)} is reserved by Core.`);
  const twice = duplicate(tools.value.map((tool) => tool.id));
  if (twice !== undefined) return skip(`Tool rejected: ${JSON.stringify(twice)} is registered twice.`);
  const kinds = checkAll(raw.kinds, checkJournalKind);
  if (!kinds.ok) return skip(`Journal kind rejected: ${kinds.message}.`);
  const kindTwice = duplicate(kinds.value.map((kind) => kind.kind));
  if (kindTwice !== undefined) return skip(`Journal kind rejected: ${JSON.stringify(kindTwice)} is registered twice.`);

  for (const hook of raw.hooks) {
    if (!isHookName(hook.name)) return fatal(`Unknown hook ${JSON.stringify(typeof hook.name === "string" ? hook.name.slice(0, 100) : hook.name)}; hooks are ${HOOK_NAMES.join(", ")}.`);
    if (typeof hook.handler !== "function") return fatal(`The ${hook.name} hook handler is not a function.`);
  }
  const agents = checkAll(raw.agents, (item) => checkAgent(item, pluginId));
  if (!agents.ok) return fatal(`Invalid Agent: ${agents.message}.`);
  if (raw.defaults.length > 1) return fatal("setDefault was called more than once.");
  const skills = checkAll(raw.skills, (item) => checkSkill(item, pluginId, settings.sourceVersion));
  if (!skills.ok) return fatal(`Invalid Skill: ${skills.message}.`);
  const sources = checkAll(raw.sources, checkSkillSource);
  if (!sources.ok) return fatal(`Invalid Skill source: ${sources.message}.`);
  const transforms = checkAll(raw.transforms, checkSkillTransform);
  if (!transforms.ok) return fatal(`Invalid Skill transform: ${transforms.message}.`);
  const mcpServers = checkAll(raw.mcp, checkMcpServer);
  if (!mcpServers.ok) return fatal(`Invalid MCP server: ${mcpServers.message}.`);
  const models = checkAll(raw.models, (item) => checkModel(item, settings.nativeProviders));
  if (!models.ok) return fatal(`Invalid model: ${models.message}.`);
  return {
    ok: true,
    value: {
      tools: tools.value,
      agents: agents.value,
      ...(raw.defaults.length === 1 ? { defaultAgent: raw.defaults[0] as string } : {}),
      skills: skills.value,
      skillSources: sources.value,
      transforms: transforms.value,
      mcpServers: mcpServers.value,
      models: models.value,
      journalKinds: kinds.value,
      hooks: raw.hooks as Contributions["hooks"],
      subscribers: raw.subscribers as Contributions["subscribers"],
    },
  };
}

/** Activates one candidate. Never throws. */
export async function activatePlugin(candidate: PluginCandidate, settings: ActivateOptions): Promise<ActivationResult> {
  const session = settings.activation.scope === "session";
  const setupSeverity: Severity = session || settings.failClosed ? "fatal" : "skip";
  const fail = (severity: Severity, message: string, pluginId?: string): ActivationResult => ({
    ok: false,
    severity: session ? "fatal" : severity,
    message: message.slice(0, MAX_SETUP_MESSAGE_CHARS),
    ...(pluginId !== undefined ? { pluginId } : {}),
  });

  const timeoutMs = settings.timeoutMs ?? DEFAULT_SETUP_TIMEOUT_MS;
  let value: unknown;
  let packageVersion: string | undefined;
  try {
    // A module whose evaluation never settles (a top-level await on nothing) would hold the
    // whole activation, and so the host, forever: its load has the setup's limit too.
    const loaded = await withDeadline(candidate.load(), timeoutMs);
    if (loaded === timedOut) return fail(setupSeverity, `The plugin module did not load within ${timeoutMs} ms.`);
    ({ value, packageVersion } = loaded);
  } catch (error) {
    settings.onDiagnostic?.(candidate.source, error);
    return fail(error instanceof PluginSourceError && error.fatal ? "fatal" : setupSeverity, describeLoadFailure(error));
  }
  if (!isRecord(value) || typeof value["setup"] !== "function" || typeof value["id"] !== "string") {
    return fail(setupSeverity, "The module's default export is not a plugin ({ id, setup }).");
  }
  const pluginId = value["id"];
  if (!isIdentifier(pluginId)) return fail("fatal", `Invalid plugin id ${JSON.stringify((pluginId as string).slice(0, 140))}: at most 128 lowercase letters and digits joined by single ".", "_" or "-", starting with a letter.`);
  const setup = value["setup"] as (context: PluginContext) => unknown;

  const raw: Raw = { tools: [], agents: [], defaults: [], skills: [], sources: [], transforms: [], mcp: [], models: [], kinds: [], hooks: [], subscribers: [] };
  const { context, close } = createContext(raw, candidate.options, settings);
  const running = (async () => setup(context))();
  let returned: unknown;
  try {
    returned = await withDeadline(running, timeoutMs);
  } catch (error) {
    close();
    settings.onDiagnostic?.(candidate.source, error);
    const message = publicMessageOf(error, MAX_SETUP_MESSAGE_CHARS);
    if (message !== undefined && hasTag(error, "PluginError")) return fail("skip", message, pluginId);
    return fail(setupSeverity, "Plugin setup failed.", pluginId);
  }
  close();
  if (returned === timedOut) {
    // A setup that settles later is rolled back: its cleanup runs as soon as it exists.
    running.then((late) => runCleanup(late, candidate.source, settings.onDiagnostic)).catch(() => undefined);
    return fail(setupSeverity, `Plugin setup did not finish within ${timeoutMs} ms.`, pluginId);
  }
  if (returned !== undefined && typeof returned !== "function") return fail("fatal", "Plugin setup returned a value that is neither nothing nor a cleanup function.", pluginId);
  const cleanup = returned as PluginCleanup | undefined;
  const checked = checkContributions(raw, pluginId, settings);
  if (!checked.ok) {
    await runCleanup(cleanup, candidate.source, settings.onDiagnostic);
    return fail(checked.severity, checked.message, pluginId);
  }
  return { ok: true, plugin: { pluginId, contributions: checked.value, ...(packageVersion !== undefined ? { packageVersion } : {}), ...(cleanup ? { cleanup } : {}) } };
}

export { runCleanup };
