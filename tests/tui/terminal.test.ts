// The built binary in a real PTY (node-pty + a headless xterm): a bare `ze-harness` opens the
// TUI, a prompt streams its answer, a tool is approved, Ctrl+C quits, and `-s ID` reopens the
// Session with its history — embedded, and over HTTP against a real `serve`. Without a
// terminal, a bare `ze-harness` prints help and `ze-harness tui` refuses.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { assertBuilt, jsonOf, runCli } from "../support/cli.js";
import { ptyTuiPerTest } from "./pty-support.js";

assertBuilt();

const t = ptyTuiPerTest();
const pty = (args: string[]) => t.pty(args);

async function conversation(connection: string[]): Promise<void> {
  const outside = join(t.home.dir, "outside");
  mkdirSync(outside);
  writeFileSync(join(outside, "note.txt"), "outside contents");
  const first = pty(connection);
  await first.waitFor(/Ask anything/);
  first.write("@say Streaming hello from the model.\r");
  await first.waitFor(/Streaming hello from the model\.\n+test\/scripted · \d/);
  first.write(`@call read {"filePath":"${join(outside, "note.txt")}"}\n@then The note was read.\r`);
  await first.waitFor(/Allow once/);
  first.write("\r"); // Allow once
  await first.waitFor(/The note was read\.\n+test\/scripted · \d/);
  first.write("\u0003"); // Ctrl+C
  expect((await first.exited).exitCode).toBe(0);

  const listed = await runCli(["session", "list", "--all", ...connection], { env: t.home.env, cwd: t.home.root });
  const sessions = jsonOf<{ id: string }[]>(listed);
  expect(sessions).toHaveLength(1);
  const second = pty([...connection, "-s", sessions[0]!.id]);
  const history = await second.waitFor(/The note was read\./).then(() => second.screen());
  expect(history).toContain("Streaming hello from the model.");
  expect(history).toMatch(/✓ read .*note\.txt/);
  second.write("\u0018q"); // Ctrl+X Q
  expect((await second.exited).exitCode).toBe(0);
}

describe("the TUI on a terminal", () => {
  it("embedded: prompt, streamed answer, approval, quit, reopen with -s and see the history", async () => {
    await conversation(["--embedded"]);
  }, 60_000);

  it("--remote against a real serve: the same conversation over HTTP", async () => {
    await conversation(["--remote", await t.serve()]);
  }, 60_000);

  it("`ze-harness tui` with an unknown Session id names the problem", async () => {
    const cli = pty(["tui", "--embedded", "550e8400-e29b-41d4-a716-446655440000"]);
    const exit = await cli.exited;
    expect(exit.exitCode).not.toBe(0);
    expect(cli.screen()).toMatch(/not found|NotFound|does not exist/i);
  });
});

describe("without a terminal", () => {
  it("a bare ze-harness prints the help", async () => {
    const result = await runCli([], { env: t.home.env, cwd: t.home.root });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("tui");
    expect(result.stdout).toMatch(/USAGE/);
  });

  it("ze-harness tui refuses with a usage error", async () => {
    const result = await runCli(["tui", "--embedded"], { env: t.home.env, cwd: t.home.root });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/the TUI needs a terminal on stdin and stdout/);
  });
});
