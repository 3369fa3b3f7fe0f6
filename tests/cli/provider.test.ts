// The `provider` commands of the BUILT binary: `connect` typed in a real PTY (no echo, refused
// without a terminal), `list`, `disconnect`, `login` (URL and code on stderr, the safe result on
// stdout, Ctrl-C cancels it), and the one line a newcomer without any provider gets from `run`.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import * as pty from "node-pty";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { createZeClient, getProvider } from "../../clients/index.js";
import { credentialHash, startTestModel, type TestModel } from "../../tools/test-model/index.js";
import { assertBuilt, jsonOf, runCli, startCli } from "../support/cli.js";
import { binPath, startServe, tempHome, type ServeProcess, type TempHome } from "../support/harness.js";
import { TEST_MODEL, testProviderConfig, writeGlobalConfig } from "../support/model.js";
import { startOAuthServer, type OAuthServer } from "../providers/oauth-server.js";
import { gateProvider, keyedProvider } from "../providers/provider-harness.js";

beforeAll(() => assertBuilt());

let home: TempHome | undefined;
let model: TestModel | undefined;
let oauth: OAuthServer | undefined;
let serve: ServeProcess | undefined;
afterEach(async () => {
  await serve?.stop();
  await model?.close();
  await oauth?.close();
  home?.cleanup();
  home = model = oauth = serve = undefined;
});

async function setup(): Promise<{ home: TempHome; model: TestModel; oauth: OAuthServer; authPath: string }> {
  model = await startTestModel();
  model.reply(() => ({ events: [{ type: "text", text: "ok" }] }));
  oauth = await startOAuthServer();
  home = tempHome("ze-cli-provider-");
  writeGlobalConfig(home, { model: TEST_MODEL, providers: { ...testProviderConfig(model), keyed: keyedProvider(model), gate: gateProvider(model, oauth) } });
  return { home, model, oauth, authPath: join(home.env["XDG_DATA_HOME"]!, "ze-harness", "auth.json") };
}

/** Runs the CLI in a real pseudo-terminal; `onOutput` may type into it. */
function runInPty(args: readonly string[], env: Record<string, string>, cwd: string, onOutput: (output: string, terminal: pty.IPty) => void): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const terminal = pty.spawn(process.execPath, [binPath, ...args], { name: "xterm", cols: 200, rows: 40, cwd, env });
    let output = "";
    terminal.onData((data) => {
      output += data;
      onOutput(output, terminal);
    });
    terminal.onExit(({ exitCode }) => resolve({ code: exitCode, output }));
  });
}

describe("provider connect", () => {
  it("reads the key without echo in a terminal; list, run and disconnect follow it", async () => {
    const { home, model, authPath } = await setup();
    const KEY = "sk-typed-in-a-pty-0123456789";
    let typed = false;
    const connected = await runInPty(["provider", "connect", "keyed", "--label", "pty", "--embedded"], home.env, home.root, (output, terminal) => {
      if (!typed && output.includes("API key for Keyed test model (keyed, not shown): ")) {
        typed = true;
        terminal.write(`${KEY}\r`);
      }
    });
    expect(typed).toBe(true);
    expect(connected.code).toBe(0);
    // Nothing echoed: the key is in no byte the terminal showed.
    expect(connected.output).not.toContain(KEY);
    expect(connected.output).toMatch(/"connectionId": "conn_/);
    expect(connected.output).toContain('"label": "pty"');
    expect(JSON.parse(readFileSync(authPath, "utf8"))).toMatchObject({ keyed: { type: "api", key: KEY, label: "pty" } });

    const listed = await runCli(["provider", "list", "--embedded"], { env: home.env, cwd: home.root });
    expect(listed).toMatchObject({ code: 0, stderr: "" });
    expect(listed.stdout).not.toContain(KEY);
    const keyed = jsonOf(listed).providers.find((provider: { id: string }) => provider.id === "keyed");
    expect(keyed).toMatchObject({ source: "stored", availability: { status: "available" }, connection: { label: "pty", method: "api_key" } });

    const ran = await runCli(["run", "--embedded", "--model", "keyed/m", "hello"], { env: home.env, cwd: home.root });
    expect(ran).toMatchObject({ code: 0, stdout: "ok\n" });
    expect(model.requests.at(-1)?.credentialSha256).toBe(credentialHash(KEY));

    const removed = await runCli(["provider", "disconnect", "keyed", "--embedded"], { env: home.env, cwd: home.root });
    expect(removed.code).toBe(0);
    expect(jsonOf(removed)).toMatchObject({ success: true, connection: { providerId: "keyed", label: "pty" } });
    expect(JSON.parse(readFileSync(authPath, "utf8"))).toEqual({});
    const again = await runCli(["provider", "disconnect", "keyed", "--embedded"], { env: home.env, cwd: home.root });
    expect(again).toMatchObject({ code: 1, stdout: "", stderr: 'error: provider "keyed" has no stored connection; nothing was removed\n' });
  });

  it("Ctrl-C at the key prompt stores nothing", async () => {
    const { home, authPath } = await setup();
    let interrupted = false;
    const result = await runInPty(["provider", "connect", "keyed", "--embedded"], home.env, home.root, (output, terminal) => {
      if (!interrupted && output.includes("not shown): ")) {
        interrupted = true;
        terminal.write("sk-partial\u0003");
      }
    });
    expect(result.code).toBe(130);
    expect(result.output).toContain("cancelled: no key was stored");
    expect(existsSync(authPath)).toBe(false);
  });

  it("refuses without an interactive terminal, with one clear line, storing nothing", async () => {
    const { home, authPath } = await setup();
    const result = await runCli(["provider", "connect", "keyed", "--embedded"], { env: home.env, cwd: home.root, input: "sk-piped-key\n" });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/^error: provider connect needs an interactive terminal: it reads the key without echo\..*\n$/);
    expect(result.stderr.split("\n").filter(Boolean)).toHaveLength(1);
    expect(existsSync(authPath)).toBe(false);
  });

  it("names an unknown provider", async () => {
    const { home } = await setup();
    const result = await runInPty(["provider", "connect", "nope", "--embedded"], home.env, home.root, () => {});
    expect(result.code).toBe(1);
    expect(result.output).toContain('error: NotFoundError: Provider "nope" is not configured on this host');
  });
});

describe("provider login", () => {
  it("prints the URL and code on stderr and only the safe result on stdout", async () => {
    const { home, oauth, model } = await setup();
    oauth.polls.push("pending", "approve");
    const result = await runCli(["provider", "login", "gate", "--embedded"], { env: home.env, cwd: home.root });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(`Open ${oauth.url}/activate and enter the code: WDJB-MJHT`);
    const login = jsonOf(result);
    expect(login).toMatchObject({ status: "connected", connection: { providerId: "gate", method: "oauth", status: "ready" } });
    expect(result.stdout).not.toContain("WDJB-MJHT");
    expect(result.stdout).not.toContain("access-1");
    const ran = await runCli(["run", "--embedded", "--model", "gate/m", "hello"], { env: home.env, cwd: home.root });
    expect(ran).toMatchObject({ code: 0, stdout: "ok\n" });
    expect(model.requests.at(-1)?.credentialSha256).toBe(credentialHash("access-1"));
  });

  it("tap: shows the TAP app's notice before the code, then routes a via: tap provider through the gateway", async () => {
    const { home, oauth, model } = await setup();
    writeGlobalConfig(home, { model: TEST_MODEL, providers: { ...testProviderConfig(model), tap: true, openrouter: { via: "tap", definition: { models: { "vendor/m": {} } } } } });
    const env = { ...home.env, ZE_HARNESS_TAP_BASE_URL: `${model.url}/v1/credits`, ZE_HARNESS_TAP_ISSUER: oauth.url };
    oauth.polls.push("approve");
    const result = await runCli(["provider", "login", "tap", "--embedded"], { env, cwd: home.root });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(
      [
        "By continuing, you acknowledge Zephyr Cloud's Terms of Service and Privacy Policy, and agree to receive occasional product emails and notifications.",
        "  Terms of Service: https://zephyr-cloud.io/terms",
        "  Privacy Policy: https://zephyr-cloud.io/privacy",
        `Open ${oauth.url}/activate and enter the code: WDJB-MJHT`,
      ].join("\n"),
    );
    expect(jsonOf(result)).toMatchObject({ status: "connected", connection: { providerId: "tap", method: "oauth" } });
    const listed = jsonOf(await runCli(["provider", "list", "--embedded"], { env, cwd: home.root })).providers as { id: string }[];
    expect(listed.find((provider) => provider.id === "openrouter")).toMatchObject({ source: "via", via: "tap", availability: { status: "available" } });
    const ran = await runCli(["run", "--embedded", "--model", "openrouter/vendor/m", "hello"], { env, cwd: home.root });
    expect(ran).toMatchObject({ code: 0, stdout: "ok\n" });
    expect(model.requests.at(-1)).toMatchObject({ path: "/v1/via/openrouter/chat/completions", credentialSha256: credentialHash("access-1") });
  });

  it("reports a denied login with exit 1", async () => {
    const { home, oauth } = await setup();
    oauth.polls.push("denied");
    const result = await runCli(["provider", "login", "gate", "--embedded"], { env: home.env, cwd: home.root });
    expect(result.code).toBe(1);
    expect(jsonOf(result)).toMatchObject({ status: "failed", reason: "denied" });
  });

  it("Ctrl-C cancels the login on the (remote) host", async () => {
    const { home, oauth } = await setup();
    serve = await startServe([], home.env, home.root);
    const cli = startCli(["provider", "login", "gate", "--remote", serve.url], { env: home.env, cwd: home.root });
    await cli.waitFor(/enter the code: WDJB-MJHT/, "stderr");
    // The login is pending on the server and being polled.
    await oauth.waitFor((requests) => requests.some((request) => request.form["grant_type"]?.endsWith("device_code")));
    cli.child.kill("SIGINT");
    const result = await cli.exited;
    expect(result.code).toBe(130);
    expect(result.stderr).toContain("cancelled: the login was cancelled");
    expect(result.stdout).toBe("");
    // The host stored nothing.
    const api = createZeClient({ baseUrl: serve.url });
    expect((await getProvider(api, "gate")).connection).toBeUndefined();
  });

  it("refuses a provider without login and an unknown method", async () => {
    const { home } = await setup();
    const none = await runCli(["provider", "login", "keyed", "--embedded"], { env: home.env, cwd: home.root });
    expect(none).toMatchObject({ code: 1, stdout: "" });
    expect(none.stderr).toMatch(/^error: ValidationError: .*provider "keyed" offers no login/);
    const method = await runCli(["provider", "login", "gate", "--method", "password", "--embedded"], { env: home.env, cwd: home.root });
    expect(method.code).toBe(1);
    expect(method.stderr).toContain('offers the login methods "device"');
  });
});

describe("a newcomer without any provider", () => {
  const expectOneActionableLine = (result: { code: number | null; stdout: string; stderr: string }) => {
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    const lines = result.stderr.split("\n").filter(Boolean);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^error: no model provider is connected: /);
    expect(lines[0]).toContain("`ze-harness provider connect openai`");
    expect(lines[0]).toContain("`ze-harness provider login openai`");
    expect(lines[0]).toContain("OPENAI_API_KEY");
  };

  it("gets one line naming provider connect, provider login and the variable (embedded)", async () => {
    home = tempHome("ze-newcomer-");
    expectOneActionableLine(await runCli(["run", "--embedded", "hello"], { env: home.env, cwd: home.root }));
    expectOneActionableLine(await runCli(["run", "--embedded", "--model", "openai/gpt-4.1", "hello"], { env: home.env, cwd: home.root }));
  });

  it("gets the same line from a remote server", async () => {
    home = tempHome("ze-newcomer-");
    serve = await startServe([], home.env, home.root);
    expectOneActionableLine(await runCli(["run", "--remote", serve.url, "hello"], { env: home.env, cwd: home.root }));
  });
});
