// `ze-harness/plugin` as plugin authors get it: resolved through package.json `exports` (after
// `npm run build`), import-free JavaScript with declarations, usable from a plugin package that
// the loader then activates.
import { symlinkSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { loadFromLayers, pluginDir, type PluginDir } from "./helpers.js";
import { runProcess } from "../support/cli.js";
import { repoRoot } from "../support/harness.js";

vi.setConfig({ testTimeout: 60_000 });

let dir: PluginDir;
beforeAll(async () => {
  await readFile(join(repoRoot, "dist", "plugin", "index.js")).catch(() => {
    throw new Error("dist/plugin is missing: run `npm run build` before this suite");
  });
});
beforeEach(() => {
  dir = pluginDir("ze-plugin-package-");
  // A consumer project with ze-harness installed (linked, as npm link would).
  dir.write("node_modules/.keep", "");
  symlinkSync(repoRoot, join(dir.dir, "node_modules", "ze-harness"), "dir");
});
afterEach(() => dir.cleanup());

const env = { PATH: process.env["PATH"] ?? "" };

describe("ze-harness/plugin", () => {
  it("resolves through the package exports in Node, with every runtime export", async () => {
    dir.write(
      "consumer.mjs",
      `import * as plugin from "ze-harness/plugin";
const defined = plugin.definePlugin({ id: "a.b", setup() {} });
console.log(JSON.stringify({ exports: Object.keys(plugin).sort(), frozen: Object.isFrozen(defined), tagged: plugin.isPluginError(new plugin.PluginError({ message: "m" })), copy: plugin.isPluginError({ _tag: "PluginError", message: "other copy" }), limit: plugin.MAX_JOURNAL_ENTRIES_PER_TURN }));`,
    );
    const result = await runProcess(process.execPath, ["consumer.mjs"], { cwd: dir.dir, env });
    expect(result.stderr).toBe("");
    expect(JSON.parse(result.stdout)).toEqual({
      exports: [
        "DEFAULT_WEB_FETCH_TIMEOUT_MS",
        "MAX_DIRECTORY_ENTRIES",
        "MAX_FILE_READ_BYTES",
        "MAX_JOURNAL_DATA_BYTES",
        "MAX_JOURNAL_ENTRIES_PER_TURN",
        "MAX_JOURNAL_KIND_LENGTH",
        "MAX_JOURNAL_SUMMARY_LENGTH",
        "MAX_SHELL_OUTPUT_BYTES",
        "MAX_SHELL_TIMEOUT_MS",
        "MAX_WEB_FETCH_RESPONSE_BYTES",
        "MAX_WEB_FETCH_TIMEOUT_MS",
        "PROVIDER_DEFINITION_ID",
        "PluginError",
        "QuestionDismissedError",
        "WebFetchError",
        "WorkspaceFileError",
        "WorkspaceShellError",
        "asString",
        "definePlugin",
        "defineProvider",
        "isPluginError",
        "isQuestionDismissedError",
        "isWebFetchError",
        "isWorkspaceFileError",
        "isWorkspaceShellError",
        "makeCompatibleProviderDefinition",
        "makeRedacted",
        "revealRedacted",
      ],
      frozen: true,
      tagged: true,
      copy: true,
      limit: 50,
    });
    // Only the exported subpaths resolve.
    dir.write("deep.mjs", `await import("ze-harness/dist/services/host/harness.js");`);
    const deep = await runProcess(process.execPath, ["deep.mjs"], { cwd: dir.dir, env });
    expect(deep.stderr).toContain("ERR_PACKAGE_PATH_NOT_EXPORTED");
  });

  it("is import-free JavaScript with declarations TypeScript resolves from the exports", async () => {
    const javascript = await readFile(join(repoRoot, "dist", "plugin", "index.js"), "utf8");
    expect(javascript).not.toMatch(/^\s*import\s|^\s*export\s[^;]*\sfrom\s|\brequire\(|import\(/m);
    expect(javascript).toContain("definePlugin");
    dir.write(
      "typed.ts",
      `import { definePlugin, type ToolDeclaration } from "ze-harness/plugin";
const tool: ToolDeclaration<{ readonly value: number }> = { id: "double", description: "d", inputSchema: { type: "object" }, execute: async (input) => input.value * 2 };
export default definePlugin({ id: "typed.plugin", setup: (context) => context.tools.register(tool) });
const wrong: ToolDeclaration = { id: "x", description: "d", inputSchema: { type: "object" } };
void wrong;
`,
    );
    dir.write("tsconfig.json", JSON.stringify({ compilerOptions: { module: "nodenext", moduleResolution: "nodenext", strict: true, noEmit: true, skipLibCheck: false, types: [] }, files: ["typed.ts"] }));
    const tsc = await runProcess(process.execPath, [join(repoRoot, "node_modules", "typescript", "bin", "tsc"), "-p", "."], { cwd: dir.dir, env });
    // The one deliberate error (a declaration without execute) proves the types were found and checked.
    expect(tsc.stdout.trim().split("\n")).toEqual([expect.stringMatching(/^typed\.ts\(4,7\): error TS2741: Property 'execute' is missing/)]);
  });

  it("a plugin package importing ze-harness/plugin activates through the loader", async () => {
    dir.write("node_modules/acme-notes/package.json", JSON.stringify({ name: "acme-notes", version: "2.0.0", type: "module", main: "index.js" }));
    dir.write(
      "node_modules/acme-notes/index.js",
      `import { definePlugin, asString } from "ze-harness/plugin";
export default definePlugin({ id: "acme.notes", setup(context) { context.tools.register({ id: "notes_folder", description: "Folder", inputSchema: { type: "object" }, execute: async () => asString(context.options.folder) ?? "notes" }); } });`,
    );
    const result = await loadFromLayers([{ file: join(dir.dir, "ze-harness.config.json"), config: { plugins: [{ source: "acme-notes", options: { folder: "docs" } }] } }], dir.dir);
    if (!result.ok) throw new Error(result.message);
    expect(result.generation.plugins).toEqual([{ source: "acme-notes", generationId: "host-1", pluginId: "acme.notes", packageVersion: "2.0.0", status: "active", registrations: ["tool:notes_folder"] }]);
  });
});
