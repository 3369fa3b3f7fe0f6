// The `ze-harness/worker-host` package entry as `npm run build` leaves it: Node resolves the name
// to dist/worker-host/index.mjs through package.json `exports`, its declaration file exports the
// host's names with their kinds, and a host Durable Object importing the name
// (tests/worker/fixtures/embed-package.mjs, bundled as an embedder's bundler would) runs in
// workerd: a Session created and listed through `host.fetch`, `resources()`, and the catalog helpers.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import type { Miniflare } from "miniflare";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sdk } from "../../clients/index.js";
import { ok } from "../support/calls.js";
import { networkClient, repoRoot } from "../support/harness.js";
import { bundle, miniflare } from "./support.js";

const ENTRY = join(repoRoot, "dist", "worker-host", "index.mjs");
let mf: Miniflare;
let url: string;

beforeAll(async () => {
  if (!existsSync(ENTRY)) throw new Error("dist/worker-host/index.mjs is missing: run `npm run build` first");
  const script = await bundle("tests/worker/fixtures/embed-package.mjs");
  mf = miniflare(script, { durableObjects: { PKG: { className: "PackageObject", useSQLite: true } }, host: "127.0.0.1", port: 0 });
  url = (await mf.ready).origin;
}, 60_000);

afterAll(async () => {
  await mf?.dispose();
});

/** Every export of the entry's declaration file: "type" for type-only names, else "value". */
function declaredKinds(): Record<string, string> {
  const manifest = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { exports: Record<string, { types: string; default: string }> };
  const file = join(repoRoot, manifest.exports["./worker-host"]!.types);
  const program = ts.createProgram([file], { module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, skipLibCheck: true, noEmit: true, types: [] });
  const checker = program.getTypeChecker();
  const moduleSymbol = checker.getSymbolAtLocation(program.getSourceFile(file)!)!;
  const kinds: Record<string, string> = {};
  for (const symbol of checker.getExportsOfModule(moduleSymbol)) {
    const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
    kinds[symbol.name] = target.flags & ts.SymbolFlags.Class ? "class" : target.flags & ts.SymbolFlags.Value ? "value" : "type";
  }
  return kinds;
}

describe("the ze-harness/worker-host entry (built)", () => {
  it("resolves by name to the bundle and declares the host's names", () => {
    const resolved = execFileSync(process.execPath, ["--input-type=module", "-e", 'process.stdout.write(import.meta.resolve("ze-harness/worker-host"))'], { cwd: repoRoot, encoding: "utf8" });
    expect(resolved).toBe(`file://${ENTRY}`);
    expect(declaredKinds()).toMatchObject({
      WorkerHarnessHost: "class",
      ModelsDevSourceError: "class",
      validateModelCatalog: "value",
      loadBundledModelsDevSnapshot: "value",
      defaultProviderIds: "value",
      WorkerHarnessHostOptions: "type",
      WorkerHostResources: "type",
      WorkerModelCatalog: "type",
      WorkerModelCatalogStatus: "type",
      HostDurableObjectState: "type",
      ProviderKeys: "type",
      TurnStreamEvent: "type",
      SessionStreamEvent: "type",
      ServerStreamEvent: "type",
      // The embedder ports and the reference's names for contract shapes.
      DurableContentResolver: "type",
      DurableContentResolutionError: "class",
      ToolDispatchError: "class",
      ToolDispatchLease: "type",
      ToolDispatchLifecycle: "type",
      ToolDispatchOutcome: "type",
      ProviderDefinition: "type",
      ProviderDefinitionMap: "type",
      ProviderModelAcquisitionInput: "type",
      HostWorkspace: "type",
      WorkspaceFileHome: "type",
      defineProvider: "value",
      HistoryVisibility: "type",
      PromptContent: "type",
      SubmitPromptCommand: "type",
      TurnFault: "type",
      TurnSnapshot: "type",
      TurnOutcome: "type",
      TurnToolPart: "type",
      WorkerServerPluginConflict: "class",
      WorkerServerPluginRejected: "class",
      WorkerServerPluginEntry: "type",
      WorkerServerPluginStatus: "type",
      WorkerStaticSessionPluginEntry: "type",
    });
  });

  it("runs in workerd inside a host Durable Object that imports it by name", async () => {
    const client = networkClient(url).client;
    const sessionId = randomUUID();
    await ok(sdk.createSession({ client, path: { server: "pkg", sessionId }, body: {} }));
    const listed = await ok(sdk.listSessions({ client, path: { server: "pkg" } }));
    expect(JSON.stringify(listed)).toContain(sessionId);
    // Another server name is not this host's.
    const other = await fetch(`${url}/v1/servers/other/sessions`);
    expect(other.status).toBe(404);

    const resources = await (await fetch(`${url}/fixture/resources`)).json();
    expect(resources).toMatchObject({ providerIds: ["openrouter"], rejectedProviders: [{ providerId: "not-a-provider" }], modelCatalog: { source: "bundled" } });
    expect(resources.modelCatalog.diagnostic).toBeUndefined();
    const exported = await (await fetch(`${url}/fixture/exports`)).json();
    expect(exported).toEqual({
      defaultProviderIds: ["openai", "opencode-go", "openrouter"],
      snapshotHasOpenAI: true,
      refused: { tag: "ModelsDevSourceError", message: "modelCatalog.document must be a models.dev-format JSON object" },
    });
  });
});
