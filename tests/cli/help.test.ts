// --version, help and completions of the built binary. The root --help is answered from a file
// written at build time (bin/ze-harness.js fast path); these tests hold it to what oclif prints.
import { createRequire } from "node:module";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { commands } from "../../cli/commands.js";
import { assertBuilt, runCli, runProcess, type CliOptions, type CliResult } from "../support/cli.js";
import { binPath, repoRoot, tempHome, type TempHome } from "../support/harness.js";

// Every test spawns node processes; leave room on a loaded two-core machine.
vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const manifest = createRequire(import.meta.url)(join(repoRoot, "package.json")) as { version: string };
const oclifUrl = pathToFileURL(createRequire(binPath).resolve("@oclif/core")).href;

let home: TempHome;
let options: CliOptions;

beforeAll(() => {
  assertBuilt();
  home = tempHome("ze-cli-help-");
  options = { env: { ...home.env, COLUMNS: "100" }, cwd: home.root };
});
afterAll(() => home.cleanup());

/** What oclif itself prints for these args: the same binary config, env and cwd, no fast path. */
function oclif(args: readonly string[]): Promise<CliResult> {
  const script = `import { execute } from ${JSON.stringify(oclifUrl)}; await execute({ args: ${JSON.stringify(args)}, dir: ${JSON.stringify(join(repoRoot, "package.json"))} });`;
  return runProcess(process.execPath, ["--input-type=module", "-e", script], options);
}

describe("--version", () => {
  it("prints ze-harness/<package version> and the platform, exit 0", async () => {
    const result = await runCli(["--version"], options);
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(result.stdout).toBe(`ze-harness/${manifest.version} ${process.platform}-${process.arch} node-${process.version}\n`);
  });

  it("is what oclif prints", async () => {
    const [fast, reference] = await Promise.all([runCli(["--version"], options), oclif(["--version"])]);
    expect(reference.code).toBe(0);
    expect(fast.stdout).toBe(reference.stdout);
  });
});

describe("root help (fast path)", () => {
  it.each([[["--help"]], [[]]])("%j equals oclif's own output byte for byte", async (args) => {
    const [fast, reference] = await Promise.all([runCli(args, options), oclif(args)]);
    expect(reference).toMatchObject({ code: 0, stderr: "" });
    expect(fast).toMatchObject({ code: 0, stderr: "" });
    expect(fast.stdout).toBe(reference.stdout);
  });

  it("names the topics and commands", async () => {
    const result = await runCli(["--help"], options);
    for (const word of ["session", "serve", "server", "completions"]) expect(result.stdout).toMatch(new RegExp(`^  ${word} `, "m"));
  });

  it("lists the reference's FLAGS and GLOBAL FLAGS", async () => {
    const result = await runCli(["--help"], options);
    expect(result.stdout).toContain(
      [
        "GLOBAL FLAGS",
        "  --help, -h                                                          Show help information",
        "  --version, -v                                                       Show version information",
        "  --wizard                                                            Start wizard mode for a command",
        "  --completions <bash|zsh|fish|sh>                                    Print shell completion script (choices: bash, zsh, fish, sh)",
        "  --log-level <all|trace|debug|info|warn|warning|error|fatal|none>    Sets the minimum log level (choices: all, trace, debug, info, warn, warning, error, fatal, none)",
      ].join("\n"),
    );
    for (const line of ["  --server string               Select a server; requires --remote", "  --config string               Use a local configuration file; unavailable with --remote", "  --mcp-callback-port string    Listen locally for MCP OAuth callbacks"]) {
      expect(result.stdout).toContain(line);
    }
  });
});

describe("session --help", () => {
  const sessionCommands = Object.keys(commands)
    .filter((id) => id.startsWith("session:"))
    .map((id) => id.replaceAll(":", " "));

  it("lists every session subcommand (nested ones under their topic)", async () => {
    const session = await runCli(["session", "--help"], options);
    expect(session).toMatchObject({ code: 0, stderr: "" });
    expect(sessionCommands.length).toBeGreaterThanOrEqual(8);
    for (const name of sessionCommands) {
      const words = name.split(" ");
      if (words.length === 2) expect(session.stdout).toMatch(new RegExp(`^  ${name} `, "m"));
      else {
        // A nested command is listed under its topic (`session config`, `session conversation`).
        const topic = await runCli([...words.slice(0, 2), "--help"], options);
        expect(topic).toMatchObject({ code: 0, stderr: "" });
        expect(session.stdout).toMatch(new RegExp(`^  ${words.slice(0, 2).join(" ")} `, "m"));
        expect(topic.stdout).toMatch(new RegExp(`^  ${name} `, "m"));
      }
    }
  });

  it("a command's help shows its flags and the connection flags", async () => {
    const result = await runCli(["session", "create", "--help"], options);
    expect(result.code).toBe(0);
    for (const flag of ["--model", "--system-prompt", "--workdir", "--session", "--remote", "--token", "--database", "--embedded"]) {
      expect(result.stdout).toContain(flag);
    }
  });
});

describe("every command's --help", () => {
  // The files were written by oclif's command table before the CLI took its fast path; oclif
  // still prints every help text (cli/oclif.ts), so a change here is a change to the help.
  const topics = ["session", "session:config", "session:conversation", "permission", "permission:saved", "question", "turn", "compaction", "mcp", "plugins", "provider", "runtime", "service", "server", "terminal", "git", "files"];

  it.each([...Object.keys(commands), ...topics])("%s --help is unchanged", async (id) => {
    const result = await runCli([...id.split(":"), "--help"], options);
    expect(result).toMatchObject({ code: 0, stderr: "" });
    await expect(result.stdout).toMatchFileSnapshot(join("__snapshots__", "help", `${id}.txt`));
  });

  it("is the same wherever --help and the connection flags stand", async () => {
    const expected = (await runCli(["session", "list", "--help"], options)).stdout;
    for (const args of [["--embedded", "session", "list", "--help"], ["session", "list", "--database", ":memory:", "--help"], ["--remote", "http://127.0.0.1:1", "session", "list", "--help"]]) {
      expect((await runCli(args, options)).stdout, JSON.stringify(args)).toBe(expected);
    }
  });
});

describe("completions", () => {
  it.each(["bash", "zsh", "fish"])("%s prints a script naming the commands", async (shell) => {
    const result = await runCli(["completions", shell], options);
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(result.stdout).toContain("session");
    expect(result.stdout).toContain("serve");
    expect(result.stdout).toContain("ze-harness");
  });

  it("the bash script passes `bash -n` and completes words when sourced", async () => {
    const script = (await runCli(["completions", "bash"], options)).stdout;
    const file = join(home.dir, "ze-harness.bash");
    writeFileSync(file, script);
    const syntax = await runProcess("bash", ["-n", file], options);
    expect(syntax).toMatchObject({ code: 0, stderr: "" });

    const complete = (words: string[]): string =>
      `COMP_WORDS=(${words.map((word) => JSON.stringify(word)).join(" ")}); COMP_CWORD=${words.length - 1}; _ze_harness; echo "\${COMPREPLY[*]}"`;
    const probe = [
      `source ${JSON.stringify(file)}`,
      complete(["ze-harness", "se"]),
      complete(["ze-harness", "session", "cr"]),
      complete(["ze-harness", "session", "config", ""]),
      complete(["ze-harness", "session", "create", "--mo"]),
    ].join("\n");
    const result = await runProcess("bash", ["-c", probe], options);
    expect(result.stderr).toBe("");
    expect(result.stdout.split("\n")).toEqual(["serve server service session", "create", "replace show", "--model", ""]);
  });

  it("zsh and fish scripts have their shell's headers", async () => {
    const [zsh, fish] = await Promise.all([runCli(["completions", "zsh"], options), runCli(["completions", "fish"], options)]);
    expect(zsh.stdout.startsWith("#compdef ze-harness\n")).toBe(true);
    expect(fish.stdout).toContain("complete -c ze-harness -n '__fish_use_subcommand' -a session");
  });

  it.each([[["completions", "tcsh"]], [["completions"]]])("%j is a usage error: exit 2, one line, nothing on stdout", async (args) => {
    const result = await runCli(args, options);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/^error: .+\n$/);
    if (args[1] === "tcsh") expect(result.stderr).toBe("error: Expected tcsh to be one of: bash, zsh, fish, sh\n");
  });
});
