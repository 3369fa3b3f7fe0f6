// `provider add` through the built binary against the scripted test model server: the config
// entry, the key (from stdin, never argv) in auth.json 0600, discovery through the server, and
// bad input that changes nothing.
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { assertBuilt, runCli, succeeded, type CliOptions } from "../support/cli.js";
import { tempHome, type TempHome } from "../support/harness.js";
import { startPty } from "../support/pty.js";

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const KEY = "sk-provider-add-0123456789";
let model: TestModel;
let home: TempHome;
let options: CliOptions;

const configFile = (): string => join(home.env["XDG_CONFIG_HOME"]!, "ze-harness", "config.json");
const authFile = (): string => join(home.env["XDG_DATA_HOME"]!, "ze-harness", "auth.json");
const readConfig = (): { providers: Record<string, unknown>; model?: string } => JSON.parse(readFileSync(configFile(), "utf8"));

beforeAll(async () => {
  assertBuilt();
  model = await startTestModel();
  model.setModelList([{ id: "alpha-1" }, { id: "beta-2", context_length: 32768 }]);
  home = tempHome("ze-cli-provider-add-");
  options = { env: home.env, cwd: home.root };
});
afterAll(async () => {
  await model?.close();
  home?.cleanup();
});

describe("provider add", () => {
  it("writes the entry, stores the key from stdin in auth.json (0600), discovers and prints the models", async () => {
    const result = await succeeded<{ provider: string; configFile: string; models: { ref: string }[] }>(
      runCli(["--embedded", "provider", "add", "local", "--base-url", model.openaiBaseURL, "--protocol", "openai", "--api-key"], { ...options, input: `${KEY}\n` }),
    );
    expect(result.provider).toBe("local");
    expect(result.configFile).toBe(configFile());
    expect(result.models.map((entry) => entry.ref).sort()).toEqual(["local/alpha-1", "local/beta-2"]);
    expect(JSON.stringify(result)).not.toContain(KEY);

    // The config: the new entry beside the defaults a providers map would otherwise switch off.
    expect(readConfig().providers).toEqual({
      openai: true,
      "opencode-go": true,
      openrouter: true,
      local: { definition: { displayName: "local", baseURL: model.openaiBaseURL, protocol: "chat", authentication: { kind: "bearer" }, discovery: true } },
    });
    expect(readFileSync(configFile(), "utf8")).not.toContain(KEY);
    // The key: in auth.json, 0600, and sent as a bearer token to the discovery request.
    expect(statSync(authFile()).mode & 0o777).toBe(0o600);
    expect(readFileSync(authFile(), "utf8")).toContain(KEY);
    expect(model.modelListRequests.at(-1)!.headers["authorization"]).toBe(`Bearer ${KEY}`);

    // Another command sees the provider and its models.
    const models = await runCli(["--embedded", "runtime", "models", "--format", "table"], options);
    expect(models.stdout).toMatch(/\nlocal\/alpha-1 +/);
  });

  it("the config JSON Schema accepts what it wrote (another command loads the file)", async () => {
    const listed = await succeeded<{ providers: { id: string; source: string }[] }>(runCli(["--embedded", "provider", "list"], options));
    expect(listed.providers.find((provider) => provider.id === "local")?.source).toBe("stored");
  });

  it("a name already in the file is a ConflictError and changes nothing", async () => {
    const before = readFileSync(configFile(), "utf8");
    const result = await runCli(["--embedded", "provider", "add", "local", "--base-url", "http://127.0.0.1:1/v1"], options);
    expect(result).toMatchObject({ code: 1, stdout: "" });
    expect(result.stderr).toBe(`error: ConflictError: ${configFile()} already has providers.local; edit it there or choose another name\n`);
    expect(readFileSync(configFile(), "utf8")).toBe(before);
  });

  it("bad input is a usage error that writes nothing: a URL that is not http(s), a bad name, a key on the command line", async () => {
    const before = readFileSync(configFile(), "utf8");
    const badUrl = await runCli(["--embedded", "provider", "add", "other", "--base-url", "ftp://x.example"], options);
    expect(badUrl).toMatchObject({ code: 2, stderr: "error: /providers/other/definition/baseURL: a base URL must use http or https\n" });
    const badName = await runCli(["--embedded", "provider", "add", "Bad Name", "--base-url", "http://127.0.0.1:1/v1"], options);
    expect(badName.code).toBe(2);
    expect(badName.stderr).toMatch(/^error: \/providers\/Bad Name: a provider ID is lowercase letters/);
    const keyInArgv = await runCli(["--embedded", "provider", "add", "other", "--base-url", "http://127.0.0.1:1/v1", "--api-key", KEY], options);
    // --api-key takes no value: a key on the command line is refused without repeating it, and nothing is stored.
    expect(keyInArgv.code).toBe(2);
    expect(keyInArgv.stderr).toMatch(/^error: --api-key takes no value/);
    expect(keyInArgv.stderr).not.toContain(KEY);
    const keyInFlag = await runCli(["--embedded", "provider", "add", "other", "--base-url", "http://127.0.0.1:1/v1", `--api-key=${KEY}`], options);
    expect(keyInFlag.code).toBe(2);
    expect(keyInFlag.stderr).not.toContain(KEY);
    const noKey = await runCli(["--embedded", "provider", "add", "other", "--base-url", "http://127.0.0.1:1/v1", "--api-key"], { ...options, input: "\n" });
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toMatch(/^error: --api-key: no key was entered/);
    expect(readFileSync(configFile(), "utf8")).toBe(before);
  });

  it("a config file that is not JSON is reported and left as it was", async () => {
    const file = join(home.dir, "broken.json");
    writeFileSync(file, "{ not json");
    const result = await runCli(["--embedded", "--config", file, "provider", "add", "other", "--base-url", "http://127.0.0.1:1/v1"], options);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`error: ConfigInvalid: ${file}: not valid JSON; fix it first (nothing was changed)\n`);
    expect(readFileSync(file, "utf8")).toBe("{ not json");
  });

  it("on a terminal the key is asked without echo", async () => {
    const pty = startPty(["--embedded", "provider", "add", "typed", "--base-url", model.openaiBaseURL, "--api-key"], { env: home.env, cwd: home.root });
    await pty.waitFor(/API key for typed \(not shown\): /, 30_000);
    pty.write(`${KEY}-typed\r`);
    const exited = await pty.exited;
    expect(exited.exitCode).toBe(0);
    expect(pty.screen()).not.toContain(KEY);
    expect(pty.screen()).toContain('"typed/alpha-1"');
    expect(readFileSync(authFile(), "utf8")).toContain(`${KEY}-typed`);
    expect(existsSync(configFile())).toBe(true);
  });
});
