// The public entry points as a user imports them: each package.json `exports` entry is imported
// by a separate Node process from the repository (`import("ze-harness/sdk")`, the package
// resolving itself by name, dist/ as `npm run build` leaves it), and every name the reference lists
// must be there with its kind. Type-only names are read from the declaration file the entry's
// `types` condition names, with the TypeScript compiler. One list per entry: extend it when the
// reference gains a name.
import { HARNESS_PROTOCOL_VERSION } from "../../services/contract/protocol.js";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { beforeAll, describe, expect, it } from "vitest";
import { assertBuilt } from "../support/cli.js";
import { repoRoot } from "../support/harness.js";

type Kind = "function" | "class" | "object" | "string" | "number" | "type";

/** Expected names by entry point. */
const EXPECTED: Record<string, Record<string, Kind>> = {
  // The reference's `@zephyrcloudio/harness-sdk` list (35 names).
  "ze-harness/sdk": {
    authFileDataRoot: "function",
    ClientConnection: "type",
    ClientDisconnection: "type",
    createEmbeddedHarness: "function",
    CreateEmbeddedHarnessOptions: "type",
    Daemon: "class",
    DAEMON_BASE_PORT: "number",
    DAEMON_FILE_NAME: "string",
    DAEMON_LOG_FILE_NAME: "string",
    DAEMON_MAX_PORT: "number",
    DAEMON_STARTUP_FILE_NAME: "string",
    daemonDirectory: "function",
    DaemonError: "class",
    DaemonOptionsMismatch: "class",
    DaemonStartObserver: "type",
    DaemonStartupProgress: "type",
    DaemonStartupReporter: "type",
    DaemonStartupStep: "type",
    DaemonStatusValue: "type",
    DaemonTransportOptions: "type",
    DaemonVersionMismatch: "class",
    DECLARATIVE_SESSION_PLUGIN: "string",
    defaultAuthFilePath: "function",
    EmbeddedHarness: "class",
    EmbeddedHarnessError: "class",
    listenEmbeddedHarness: "function",
    ListenOptions: "type",
    makeDaemonLog: "function",
    makeDaemonStartupReporter: "function",
    makeMcpSecretCredentialResolver: "function",
    NodeListener: "type",
    resolveProjectIdentity: "function",
    ServerListenError: "class",
    startDaemonLogTrim: "function",
    StorageMigrationProgress: "type",
    // Native provider authoring (harness-llm's names, re-exported from ze-harness/plugin).
    defineProvider: "function",
    makeCompatibleProviderDefinition: "function",
    ProviderDefinition: "type",
    // The embedder ports (the names WorkerHarnessHost's entry shares).
    DurableContentResolver: "type",
    DurableContentResolutionError: "class",
    ToolDispatchError: "class",
    ToolDispatchLease: "type",
    ToolDispatchLifecycle: "type",
    ToolDispatchOutcome: "type",
  },
  // The names issue 20 §8 adds to `@zephyrcloudio/harness-client`, and the client itself.
  "ze-harness/client": {
    createClient: "function",
    HarnessClient: "class",
    textPrompt: "function",
    imageUrlPrompt: "function",
    imageBase64Prompt: "function",
    sniffImageMime: "function",
    SERVER_VERSION_HEADER: "string",
    HARNESS_PROTOCOL_VERSION: "number",
    MCP_PROTOCOL_VERSION: "string",
    CreateClientOptions: "type",
  },
  // `@zephyrcloudio/harness-codemode` and its `/format` entry.
  "ze-harness/codemode": {
    CodeMode: "object",
    Tool: "object",
    renderResult: "function",
    formatCodeMode: "function",
    makeCodeModeFormatter: "function",
  },
  "ze-harness/codemode/format": {
    formatCodeMode: "function",
    makeCodeModeFormatter: "function",
  },
};

/** The runtime kind of every export of `specifier`, imported by Node from the repository root. */
function runtimeKinds(specifier: string): Record<string, string> {
  const script = `
    const m = await import(${JSON.stringify(specifier)});
    const kind = (v) => typeof v === "function" ? (/^class[\\s{]/.test(Function.prototype.toString.call(v)) ? "class" : "function") : v === null ? "null" : typeof v;
    process.stdout.write(JSON.stringify(Object.fromEntries(Object.entries(m).map(([k, v]) => [k, kind(v)]))));
  `;
  return JSON.parse(execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd: repoRoot, encoding: "utf8" })) as Record<string, string>;
}

/** The type-only exports of the declaration file `specifier`'s `types` condition names. */
function typeOnlyExports(specifier: string): Set<string> {
  const manifest = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { exports: Record<string, { types: string }> };
  const entry = manifest.exports[`.${specifier.slice("ze-harness".length)}`];
  if (entry === undefined) throw new Error(`package.json exports has no ${specifier}`);
  const file = join(repoRoot, entry.types);
  const program = ts.createProgram([file], { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, skipLibCheck: true, noEmit: true, types: [] });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(file);
  const moduleSymbol = source && checker.getSymbolAtLocation(source);
  if (moduleSymbol === undefined) throw new Error(`cannot read ${file}`);
  const names = new Set<string>();
  for (const symbol of checker.getExportsOfModule(moduleSymbol)) {
    const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
    if (target.flags & ts.SymbolFlags.Type && !(target.flags & ts.SymbolFlags.Value)) names.add(symbol.name);
  }
  return names;
}

beforeAll(() => assertBuilt());

describe("public exports, imported from the built package", () => {
  it.each(Object.keys(EXPECTED))("%s exports every listed name with its kind", (specifier) => {
    const expected = EXPECTED[specifier]!;
    const runtime = runtimeKinds(specifier);
    const types = Object.values(expected).includes("type") ? typeOnlyExports(specifier) : new Set<string>();
    const actual = Object.fromEntries(Object.keys(expected).map((name) => [name, types.has(name) ? "type" : (runtime[name] ?? "missing")]));
    expect(actual).toEqual(expected);
  });

  it("the values behave as documented", () => {
    const script = `
      const sdk = await import("ze-harness/sdk");
      const client = await import("ze-harness/client");
      const codemode = await import("ze-harness/codemode");
      const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0]);
      const runtime = codemode.CodeMode.make({ tools: { echo: codemode.Tool.make({ description: "Echo.", input: { type: "string" }, execute: (value) => value }) } });
      const result = await runtime.execute('return await tools.echo("hello");');
      process.stdout.write(JSON.stringify({
        files: [sdk.DAEMON_FILE_NAME, sdk.DAEMON_LOG_FILE_NAME, sdk.DAEMON_STARTUP_FILE_NAME],
        ports: [sdk.DAEMON_BASE_PORT, sdk.DAEMON_MAX_PORT],
        declarative: sdk.DECLARATIVE_SESSION_PLUGIN,
        secret: await sdk.makeMcpSecretCredentialResolver({ token: "s3" })("token"),
        header: client.SERVER_VERSION_HEADER,
        protocol: client.HARNESS_PROTOCOL_VERSION,
        mcp: client.MCP_PROTOCOL_VERSION,
        sniffed: client.sniffImageMime(png),
        prompt: client.imageUrlPrompt("Look", "https://example.test/a.png"),
        rendered: codemode.renderResult(result),
        formatted: await codemode.formatCodeMode("if (a) {\\nreturn 1;\\n}"),
      }));
      process.exit(0);
    `;
    const values = JSON.parse(execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd: repoRoot, encoding: "utf8" }));
    expect(values).toEqual({
      files: ["server.json", "daemon.log", "daemon-startup.json"],
      ports: [4096, 4295],
      declarative: "ze-harness.declarative",
      secret: "s3",
      header: "Ze-Harness-Version",
      protocol: HARNESS_PROTOCOL_VERSION,
      mcp: "2025-06-18",
      sniffed: "image/png",
      prompt: [
        { type: "text", text: "Look" },
        { type: "image", source: { type: "url", url: "https://example.test/a.png" } },
      ],
      rendered: "hello",
      formatted: "if (a) {\n  return 1;\n}",
    });
  });
});
