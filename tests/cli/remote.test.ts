// `--remote URL` against a real `serve` process of the built binary, with a bearer token.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { Session, SessionConfiguration } from "../../clients/index.js";
import { assertBuilt, runCli, type CliOptions, type CliResult, succeeded } from "../support/cli.js";
import { startServe, tempHome, type ServeProcess, type TempHome } from "../support/harness.js";

// Every test spawns node processes; leave room on a loaded two-core machine.
vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const token = "cli-remote-test-token";
let home: TempHome;
let serve: ServeProcess;
let options: CliOptions;

beforeAll(async () => {
  assertBuilt();
  home = tempHome("ze-cli-remote-");
  mkdirSync(join(home.root, "sub"));
  serve = await startServe(["--token", token, "--database", join(home.dir, "serve.db")], home.env, home.root);
  options = { env: home.env, cwd: home.root };
});
afterAll(async () => {
  await serve?.stop();
  home?.cleanup();
});

const remote = (args: readonly string[], overrides: Partial<CliOptions> = {}): Promise<CliResult> =>
  runCli([...args, "--remote", serve.url, "--token", token], { ...options, ...overrides });


function expectApiError(result: CliResult, tag: string): void {
  expect(result.stdout).toBe("");
  expect(result.stderr).toMatch(new RegExp(`^error: ${tag}: [^\\n]+\\n$`));
  expect(result.code).toBe(1);
}

describe("--remote", () => {
  it("serve prints a loopback base URL", () => {
    expect(serve.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it("create, show and list go through the server", async () => {
    const session = await succeeded<Session>(remote(["session", "create", "--model", "openai/gpt-5"]));
    expect(session).toMatchObject({ projectId: "global", defaultModel: "openai/gpt-5" });
    expect(await succeeded<Session>(remote(["session", "show", session.id]))).toEqual(session);
    const listed = await succeeded<Session[]>(remote(["session", "list"]));
    expect(listed.map((entry) => entry.id)).toContain(session.id);
    // Nothing was written to the local default database.
    expect(await succeeded<Session[]>(runCli(["--embedded", "session", "list", "--all"], options))).toEqual([]);
  });

  it("the cwd is sent as a clientWorkdir hint, resolved inside the server root", async () => {
    const session = await succeeded<Session>(remote(["session", "create"], { cwd: join(home.root, "sub") }));
    expect(session.workdir).toBe("sub");
  });

  it("a trailing slash on the URL is accepted", async () => {
    const result = await runCli(["session", "list", "--remote", `${serve.url}/`, "--token", token], options);
    expect(result).toMatchObject({ code: 0, stderr: "" });
  });

  it("ZE_HARNESS_TOKEN stands in for --token", async () => {
    const result = await runCli(["session", "list", "--remote", serve.url], { ...options, env: { ...home.env, ZE_HARNESS_TOKEN: token } });
    expect(result).toMatchObject({ code: 0, stderr: "" });
  });

  it("a wrong token is `error: UnauthorizedError: …`, exit 1, empty stdout", async () => {
    expectApiError(await runCli(["session", "list", "--remote", serve.url, "--token", "wrong"], options), "UnauthorizedError");
  });

  it("no token is an UnauthorizedError too", async () => {
    expectApiError(await runCli(["session", "list", "--remote", serve.url], options), "UnauthorizedError");
  });

  it("an unknown Session is a NotFoundError", async () => {
    expectApiError(await remote(["session", "show", "00000000-0000-4000-8000-000000000000"]), "NotFoundError");
  });

  it("config replace over HTTP: stdin, then a stale revision is a ConflictError", async () => {
    const session = await succeeded<Session>(remote(["session", "create"]));
    const rules = JSON.stringify({ permissions: [{ action: "read", resource: "*", effect: "allow" }], approval: {} });
    const replaced = await succeeded<SessionConfiguration>(remote(["session", "config", "replace", session.id, "1", "-"], { input: rules }));
    expect(replaced.revision).toBe(2);
    expectApiError(await remote(["session", "config", "replace", session.id, "1", "-"], { input: rules }), "ConflictError");
  });

  it("an unreachable server fails with exit 1 and one line", async () => {
    const result = await runCli(["session", "list", "--remote", "http://127.0.0.1:9"], options);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/^error: [^\n]+\n$/);
    expect(result.code).toBe(1);
  });

  it("a port in use fails with exit 1 and one line", async () => {
    const port = new URL(serve.url).port;
    const result = await runCli(["serve", "--port", port, "--database", ":memory:"], options);
    expect(result.stdout).toBe("");
    expect(result.stderr).toBe(`error: AddressInUse: 127.0.0.1:${port} is in use; pass --port 0 for any free port\n`);
    expect(result.code).toBe(1);
  });

  it.each([
    ["an empty --token", ["--token", ""], {}, "error: --token must not be empty (every request would then be refused); omit it to serve loopback without a token\n"],
    ["a --root that does not exist", ["--root", "/nonexistent/ze-root"], {}, "error: --root /nonexistent/ze-root does not exist\n"],
  ])("serve refuses to start with %s: one line, exit 2, nothing served", async (_name, args, env, stderr) => {
    const result = await runCli(["serve", "--port", "0", "--database", ":memory:", ...args], { ...options, env: { ...options.env, ...env } });
    expect(result).toMatchObject({ code: 2, stdout: "", stderr });
  });

  it("serve refuses a --root that is a file", async () => {
    const file = join(home.dir, "not-a-directory");
    writeFileSync(file, "x");
    const result = await runCli(["serve", "--port", "0", "--database", ":memory:", "--root", file], options);
    expect(result).toMatchObject({ code: 2, stdout: "", stderr: `error: --root ${file} is not a directory\n` });
  });

  it("a non-loopback address without --token is refused as a usage error", async () => {
    const result = await runCli(["serve", "--port", "0", "--hostname", "0.0.0.0"], options);
    expect(result).toMatchObject({ code: 2, stdout: "", stderr: "error: refusing to listen on non-loopback address 0.0.0.0 without --token\n" });
  });

  // A signal sent the moment the URL line arrives must close cleanly (exit 0), not kill.
  it.each(["SIGTERM", "SIGINT"] as const)("serve exits 0 on %s sent right after its URL line", async (signal) => {
    for (let attempt = 0; attempt < 3; attempt++) {
      const other = await startServe(["--database", ":memory:"], home.env, home.root);
      expect(await other.stop(signal)).toBe(0);
      // Nothing but the start-up line that it asks for no token.
      expect(other.stderr()).toMatch(/^timestamp=\S+ level=WARN run=\w+ service=server event=server\.unauthenticated message="[^"\n]+"\n$/);
    }
  });
});
