// Shared resources for the plugin suites: a temp directory to write real plugin modules into,
// candidates built from config layers the way the host builds them, and a tool context for
// calling adapted plugin tools directly.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import type { PluginActivation } from "../../plugin/index.js";
import { configCandidates, loadPluginGeneration, pluginEntriesFromLayers, unavailableCapabilities, type LoadPluginGenerationOptions, type PluginConfigLayer } from "../../services/plugins/index.js";
import type { ToolContext } from "../../services/tools/tool.js";
import { repoRoot } from "../support/harness.js";

/** `import { definePlugin } from <this>` inside a plugin file written by a test (the contract's source). */
export const contractUrl = pathToFileURL(join(repoRoot, "plugin", "index.ts")).href;

export interface PluginDir {
  readonly dir: string;
  /** Writes `relative` (parents created) and returns its absolute path. */
  write(relative: string, text: string): string;
  cleanup(): void;
}

export function pluginDir(prefix = "ze-plugins-"): PluginDir {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  return {
    dir,
    write(relative, text) {
      const path = join(dir, relative);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, text);
      return path;
    },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export const hostActivation = (version = 1): PluginActivation => ({ scope: "host", revision: { id: `host-${version}`, version } });

/** Loads a host generation from config layers, resolved from `projectDirectory`. */
export function loadFromLayers(layers: readonly PluginConfigLayer[], projectDirectory: string, options: Partial<LoadPluginGenerationOptions> = {}) {
  return loadPluginGeneration({
    activation: hostActivation(),
    candidates: configCandidates(pluginEntriesFromLayers(layers), projectDirectory),
    capabilities: unavailableCapabilities(),
    ...options,
  });
}

/** A plugin module whose setup registers one tool `id` that doubles `value`. */
export const doublingPlugin = (pluginId: string, toolId = "double", extra = "") => `
export default {
  id: ${JSON.stringify(pluginId)},
  setup(context) {
    context.tools.register({
      id: ${JSON.stringify(toolId)},
      description: "Double a number",
      inputSchema: { type: "object", properties: { value: { type: "number" } }, required: ["value"], additionalProperties: false },
      execute: async (input) => ({ value: input.value * 2, by: ${JSON.stringify(pluginId)} }),
    });
    ${extra}
  },
};
`;

/** A tool context for calling an adapted plugin tool outside a Turn loop. */
export function toolContext(overrides: Partial<ToolContext> = {}): ToolContext {
  return {
    workdir: tmpdir(),
    sessionId: "00000000-0000-4000-8000-000000000001",
    turnId: "00000000-0000-4000-8000-000000000002",
    toolCallId: "call_1",
    signal: new AbortController().signal,
    artifactsDirectory: join(tmpdir(), "ze-artifacts"),
    reportActivity: () => undefined,
    askQuestion: async () => [["yes"]],
    ...overrides,
  };
}
