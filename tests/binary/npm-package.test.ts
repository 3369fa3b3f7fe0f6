// The npm form: `npm pack` makes a publishable tarball of the BUILT package (npm test built dist/;
// the pack runs with --ignore-scripts so it does not build again — `prepare` is what builds before
// a real pack), and `npm install -g ./ze-harness-*.tgz` into a temp prefix installs it and its
// dependencies with no network (tests/support/registry.ts serves them from npm's cache; install
// scripts are skipped: node-pty's native build is its own and not what is under test) and the
// installed `ze-harness` answers --version and runs a one-shot Turn.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { runProcess } from "../support/cli.js";
import { repoRoot, tempHome, type TempHome } from "../support/harness.js";
import { TEST_MODEL, testProviderConfig, writeGlobalConfig } from "../support/model.js";
import { startLockRegistry, type LockRegistry } from "../support/registry.js";

vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });

const manifest = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as { version: string; private?: boolean; scripts: Record<string, string> };
let directory: string;
let tarball: string;
let registry: LockRegistry;
let model: TestModel;
let home: TempHome;

beforeAll(async () => {
  directory = realpathSync(mkdtempSync(join(tmpdir(), "ze-npm-")));
  execFileSync("npm", ["pack", "--ignore-scripts", "--silent", "--pack-destination", directory], { cwd: repoRoot, stdio: ["ignore", "ignore", "pipe"] });
  tarball = join(directory, `ze-harness-${manifest.version}.tgz`);
  registry = await startLockRegistry(join(repoRoot, "package-lock.json"));
  model = await startTestModel({ directives: true });
  home = tempHome("ze-npm-home-");
  writeGlobalConfig(home, { model: TEST_MODEL, providers: testProviderConfig(model) });
});
afterAll(async () => {
  await registry?.close();
  await model?.close();
  home?.cleanup();
  if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
});

describe("the npm package", () => {
  it("is publishable, built before packing (prepare), and ships the built CLI without sources or release output", () => {
    expect(manifest.private).toBeUndefined();
    expect(manifest.scripts["prepare"]).toBe("npm run build");
    const files = execFileSync("tar", ["-tzf", tarball], { encoding: "utf8" }).split("\n");
    expect(files).toEqual(expect.arrayContaining(["package/package.json", "package/LICENSE", "package/README.md", "package/bin/ze-harness.js", "package/dist/bundle/main.js", "package/dist/cli/root-help.txt", "package/generated/openapi.json"]));
    expect(files.filter((file) => file.startsWith("package/dist/release/") || file.startsWith("package/services/") || file.endsWith(".ts") && !file.endsWith(".d.ts"))).toEqual([]);
  });

  it("installs globally from the tarball and runs --version and a one-shot Turn", async () => {
    const prefix = join(directory, "prefix");
    const install = await runProcess(
      "npm",
      ["install", "-g", "--prefix", prefix, "--registry", registry.url, "--cache", join(directory, "npm-cache"), "--ignore-scripts", "--no-audit", "--no-fund", "--no-update-notifier", tarball],
      { env: { PATH: process.env["PATH"] ?? "", HOME: home.env["HOME"]! }, cwd: directory },
    );
    expect(install.code, install.stderr).toBe(0);
    expect(registry.served).toContain("libsql/" + JSON.parse(readFileSync(join(repoRoot, "node_modules", "libsql", "package.json"), "utf8")).version);
    const installed = join(prefix, "bin", "ze-harness");
    expect(existsSync(join(prefix, "lib", "node_modules", "ze-harness", "dist", "bundle", "main.js"))).toBe(true);
    const version = await runProcess(installed, ["--version"], { env: home.env, cwd: home.root });
    expect(version).toMatchObject({ code: 0, stderr: "" });
    expect(version.stdout).toMatch(new RegExp(`^ze-harness/${manifest.version.replace(/\./g, "\\.")} `));
    const run = await runProcess(installed, ["run", "--embedded", "@say Hello from the npm install."], { env: home.env, cwd: home.root });
    expect(run).toMatchObject({ code: 0, stderr: "", stdout: "Hello from the npm install.\n" });
  });
});
