// `runtime models`, `runtime models --refresh`, `runtime reload` and `session models` through the
// built binary: embedded, and over --remote against a real `serve`; JSON output, exit codes and
// one-line errors. Discovery runs against the scripted test model's `/models`.
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { CatalogSnapshot, RefreshProviderModelsResponse, RuntimeReloadResponse, Session } from "../../clients/index.js";
import { startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { assertBuilt, jsonOf, runCli, type CliOptions, type CliResult } from "../support/cli.js";
import { startServe, tempHome, type ServeProcess, type TempHome } from "../support/harness.js";
import { writeGlobalConfig } from "../support/model.js";

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

let home: TempHome;
let model: TestModel;
let options: CliOptions;
let serve: ServeProcess | undefined;

beforeAll(async () => {
  assertBuilt();
  model = await startTestModel();
  model.setModelList([{ id: "listed-1", context_length: 8192 }]);
  home = tempHome("ze-cli-models-");
  writeGlobalConfig(home, {
    model: "local-proxy/listed-1",
    providers: {
      "local-proxy": { definition: { displayName: "Local proxy", baseURL: model.openaiBaseURL, protocol: "chat", authentication: { kind: "none" } } },
    },
  });
  options = { env: home.env, cwd: home.root };
});
afterAll(async () => {
  await serve?.stop();
  await model.close();
  home.cleanup();
});

const cli = (args: readonly string[]): Promise<CliResult> => runCli(args, options);

async function ok<T>(args: readonly string[]): Promise<T> {
  const result = await cli(args);
  expect(result.stderr, `stderr of ${args.join(" ")}`).toBe("");
  expect(result.code, `exit code of ${args.join(" ")}`).toBe(0);
  return jsonOf<T>(result);
}

describe("embedded", () => {
  it("runtime models prints the snapshot with discovered models", async () => {
    const snapshot = await ok<CatalogSnapshot>(["runtime", "models", "--embedded"]);
    expect(snapshot.hostRevision).toMatch(/^catalog-/);
    expect(snapshot.defaultModel).toBe("local-proxy/listed-1");
    expect(snapshot.providers).toEqual([{ id: "local-proxy", displayName: "Local proxy", availability: { status: "available" } }]);
    expect(snapshot.models).toEqual([expect.objectContaining({ ref: "local-proxy/listed-1", limits: { contextUnits: 8192, outputUnits: 0 } })]);
  });

  it("session models prints the Session's adopted snapshot; an unknown Session is a NotFoundError, a bad id a usage error", async () => {
    const session = await ok<Session>(["session", "create", "--embedded"]);
    const adopted = await ok<CatalogSnapshot>(["session", "models", session.id, "--embedded"]);
    const runtime = await ok<CatalogSnapshot>(["runtime", "models", "--embedded"]);
    expect(adopted).toEqual(runtime);
    const unknown = await cli(["session", "models", randomUUID(), "--embedded"]);
    expect(unknown).toMatchObject({ code: 1, stdout: "" });
    expect(unknown.stderr).toMatch(/^error: NotFoundError: [^\n]+\n$/);
    const bad = await cli(["session", "models", "not-a-uuid", "--embedded"]);
    expect(bad).toMatchObject({ code: 2, stdout: "" });
    expect(bad.stderr).toMatch(/not a Session id/);
  });

  it("runtime models --refresh reports per-provider outcomes; --provider limits it; an unknown one is a NotFoundError", async () => {
    const refreshed = await ok<RefreshProviderModelsResponse>(["runtime", "models", "--refresh", "--provider", "local-proxy", "--embedded"]);
    expect(refreshed.providers).toEqual([{ providerId: "local-proxy", status: "unchanged" }]);
    expect(refreshed.snapshot.models.map((m) => m.ref)).toEqual(["local-proxy/listed-1"]);
    const unknown = await cli(["runtime", "models", "--refresh", "--provider", "nope", "--embedded"]);
    expect(unknown).toMatchObject({ code: 1, stdout: "" });
    expect(unknown.stderr).toMatch(/^error: NotFoundError: Provider nope is not configured\n$/);
    const usage = await cli(["runtime", "models", "--provider", "local-proxy", "--embedded"]);
    expect(usage).toMatchObject({ code: 2, stdout: "" });
    expect(usage.stderr).toMatch(/--provider needs --refresh/);
  });

  it("runtime reload prints the reload result", async () => {
    const reloaded = await ok<RuntimeReloadResponse>(["runtime", "reload", "--embedded"]);
    expect(reloaded).toEqual({ result: "reloaded", plugins: [] });
  });
});

describe("over --remote", () => {
  it("runtime reload repeats discovery on the server, and runtime models shows it", async () => {
    serve = await startServe(["--database", join(home.dir, "serve.db")], home.env, home.root);
    const remote = ["--remote", serve.url];
    const before = await ok<CatalogSnapshot>(["runtime", "models", ...remote]);
    expect(before.models.map((m) => m.ref)).toEqual(["local-proxy/listed-1"]);
    model.setModelList([{ id: "listed-1", context_length: 8192 }, { id: "listed-2" }]);
    const reloaded = await ok<RuntimeReloadResponse>(["runtime", "reload", ...remote]);
    expect(reloaded.result).toBe("reloaded");
    const after = await ok<CatalogSnapshot>(["runtime", "models", ...remote]);
    expect(after.models.map((m) => m.ref)).toEqual(["local-proxy/listed-1", "local-proxy/listed-2"]);
    expect(after.hostRevision).not.toBe(before.hostRevision);
    const session = await ok<Session>(["session", "create", ...remote]);
    expect((await ok<CatalogSnapshot>(["session", "models", session.id, ...remote])).hostRevision).toBe(after.hostRevision);
  });
});
