// The reference's "Command reference": `server delete [--all]`, the GLOBAL FLAGS (--version/-v,
// --wizard, --completions <bash|zsh|fish|sh>, --log-level) and the connection flags' rules
// (--server requires --remote, --config is unavailable with --remote, --mcp-callback-port is an
// embedded host's) — through the built binary.
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { assertBuilt, jsonOf, runCli, type CliOptions } from "../support/cli.js";
import { gitRepository } from "../support/git.js";
import { tempHome, type TempHome } from "../support/harness.js";
import { startPty } from "../support/pty.js";

vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

let home: TempHome;
let options: CliOptions;

beforeAll(() => {
  assertBuilt();
  home = tempHome("ze-cli-flags-");
  options = { env: home.env, cwd: home.root };
});
afterAll(() => home.cleanup());

const usage = (result: { code: number | null; stdout: string; stderr: string }, line: string): void => {
  expect(result).toMatchObject({ code: 2, stdout: "", stderr: `error: ${line}\n` });
};

describe("server delete [--all]", () => {
  it("cancels and deletes the current project's Sessions, --all every project's; workspace files stay", async () => {
    const database = join(home.dir, "delete.db");
    const repo = gitRepository(join(home.root, "repo"), home.env, "https://example.com/team/repo.git");
    const embedded = ["--embedded", "--database", database];
    const global = jsonOf<{ id: string; projectId: string }>(await runCli(["session", "create", ...embedded], options));
    const other = jsonOf<{ id: string; projectId: string }>(await runCli(["session", "create", "--workdir", "repo", ...embedded], options));
    expect(global.projectId).toBe("global");
    expect(other.projectId).not.toBe("global");

    const first = await runCli(["server", "delete", ...embedded], options);
    expect(first).toMatchObject({ code: 0, stderr: "" });
    expect(jsonOf(first)).toEqual({ server: "local", sessionIds: [global.id] });
    expect(jsonOf<{ id: string }[]>(await runCli(["session", "list", "--all", ...embedded], options)).map((session) => session.id)).toEqual([other.id]);

    const all = await runCli(["server", "delete", "--all", ...embedded], options);
    expect(jsonOf(all)).toEqual({ server: "local", sessionIds: [other.id] });
    expect(jsonOf(await runCli(["session", "list", "--all", ...embedded], options))).toEqual([]);
    // Deleted ids stay retired; the workdir's files stay.
    const show = await runCli(["session", "show", other.id, ...embedded], options);
    expect(show.code).toBe(1);
    expect(show.stderr).toMatch(/^error: NotFoundError: /);
    expect((await import("node:fs")).existsSync(join(repo, ".git"))).toBe(true);
  });

  it("--all and --project together are a usage error", async () => {
    const result = await runCli(["server", "delete", "--all", "--project", "p", "--embedded", "--database", ":memory:"], options);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
  });
});

describe("global flags", () => {
  it("-v and --version print the version, also after a command", async () => {
    const expected = (await runCli(["--version"], options)).stdout;
    expect(expected).toMatch(/^ze-harness\/\d+\.\d+\.\d+ /);
    for (const args of [["-v"], ["session", "list", "--version"], ["--embedded", "--version"]]) {
      expect(await runCli(args, options), JSON.stringify(args)).toMatchObject({ code: 0, stdout: expected, stderr: "" });
    }
  });

  it("--completions SHELL prints what `completions SHELL` prints, sh included", async () => {
    for (const shell of ["bash", "zsh", "fish", "sh"]) {
      const [flag, command] = await Promise.all([runCli(["--completions", shell], options), runCli(["completions", shell], options)]);
      expect(command).toMatchObject({ code: 0, stderr: "" });
      expect(flag).toMatchObject({ code: 0, stderr: "", stdout: command.stdout });
    }
    const sh = (await runCli(["--completions=sh"], options)).stdout;
    expect(sh.split("\n")[0]).toBe("# ze-harness sh completion (needs the `complete` builtin, as bash has also in sh mode)");
    expect(sh).toContain("complete -F _ze_harness ze-harness");
  });

  it("the sh script completes commands in bash's sh mode", async () => {
    const script = join(home.dir, "ze-harness.sh");
    (await import("node:fs")).writeFileSync(script, (await runCli(["completions", "sh"], options)).stdout);
    const probe = `set -o posix; . ${JSON.stringify(script)}; COMP_WORDS=(ze-harness ser); COMP_CWORD=1; _ze_harness; echo "\${COMPREPLY[*]}"`;
    const { runProcess } = await import("../support/cli.js");
    expect(await runProcess("bash", ["-c", probe], options)).toMatchObject({ code: 0, stdout: "serve server service\n", stderr: "" });
  });

  it.each([
    [["--completions", "tcsh"], 'Expected --completions to be one of: bash, zsh, fish, sh, not "tcsh"'],
    [["--completions"], "--completions needs a value: one of bash, zsh, fish, sh"],
    [["--completions", "bash", "session"], "--completions prints a script; it takes no command (session)"],
    [["--log-level", "loud", "session", "list"], 'Expected --log-level to be one of: all, trace, debug, info, warn, warning, error, fatal, none, not "loud"'],
  ])("%j is a usage error", async (args, line) => {
    usage(await runCli(args, options), line);
  });

  it("--log-level sets the minimum level of the log lines a server writes", async () => {
    // A tokenless serve warns on stderr (event=server.unauthenticated); at --log-level error it does not.
    const run = async (args: string[]): Promise<string> => {
      const { startCli } = await import("../support/cli.js");
      const server = startCli([...args, "serve", "--port", "0", "--database", ":memory:"], options);
      await server.waitFor(/^http:\/\/127\.0\.0\.1:\d+\n/m);
      server.child.kill("SIGTERM");
      return (await server.exited).stderr;
    };
    expect(await run([])).toMatch(/level=WARN .*event=server\.unauthenticated/);
    expect(await run(["--log-level", "error"])).not.toMatch(/level=(INFO|WARN)/);
  });

  it("--wizard asks for the command, its arguments and flags on a terminal, then runs it", async () => {
    const cli = startPty(["--wizard"], { env: home.env, cwd: home.root, cols: 300 });
    await cli.waitFor(/Command \(acp, .*completions.*\):/);
    cli.write("completions\r");
    await cli.waitFor(/SHELL — Shell to complete\. \(bash, zsh, fish, sh\):/);
    cli.write("fish\r");
    await cli.waitFor(/complete -c ze-harness -f/);
    expect((await cli.exited).exitCode).toBe(0);
    expect(cli.screen()).toContain("ze-harness completions fish");
  });

  it("--wizard without a terminal is a usage error", async () => {
    usage(await runCli(["--wizard", "session", "list"], options), "--wizard asks on an interactive terminal; give the command line in full instead");
  });
});

describe("connection flags", () => {
  it("--server without --remote is refused (exit 2), wherever it stands", async () => {
    for (const args of [["--server", "main", "session", "list"], ["session", "list", "--server", "main", "--embedded"]]) {
      usage(await runCli(args, options), "--server selects a server of a remote Harness; it requires --remote");
    }
  });

  it("--config with --remote is refused (exit 2) before anything is sent", async () => {
    let requests = 0;
    const server: Server = createServer((_, response) => {
      requests += 1;
      response.end("{}");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = server.address() as { port: number };
      usage(
        await runCli(["--remote", `http://127.0.0.1:${port}`, "--config", "x.json", "session", "list"], options),
        "--config configures a local host; it is unavailable with --remote (the remote server uses its own configuration)",
      );
      expect(requests).toBe(0);
    } finally {
      server.close();
    }
  });

  it("--mcp-callback-port is a connection flag for an embedded host; elsewhere refused", async () => {
    usage(await runCli(["--mcp-callback-port", "8765", "session", "list"], options), "--mcp-callback-port sets an embedded host's callback address (pass --embedded); the local daemon and a remote server decide their own");
    const result = await runCli(["--mcp-callback-port", "8765", "session", "list", "--embedded", "--database", ":memory:"], options);
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(jsonOf(result)).toEqual([]);
    expect((await runCli(["session", "list", "--mcp-callback-port", "0", "--embedded"], options)).code).toBe(2);
  });
});
