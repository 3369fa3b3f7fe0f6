// The terminal commands of the built binary against a real `serve` (the PTY lives in the server):
// open with --exec, type with input --enter, page the output, close, and read the display.
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { assertBuilt, jsonOf, runCli } from "../support/cli.js";
import { startServe, tempHome, type ServeProcess, type TempHome } from "../support/harness.js";

let home: TempHome;
let serve: ServeProcess | undefined;
beforeAll(() => assertBuilt());
afterEach(async () => {
  await serve?.stop();
  serve = undefined;
  home.cleanup();
});

describe("terminal commands", () => {
  it("open, input, output, close and display against a serve", async () => {
    home = tempHome();
    serve = await startServe([], home.env, home.root);
    const cli = (...args: string[]) => runCli([...args, "--remote", serve!.url], { env: home.env, cwd: home.root });
    const created = jsonOf(await cli("session", "create"));
    const sessionId = created.id as string;
    const opened = await cli("terminal", "open", sessionId, "--exec", "read name; echo \"hello $name\"", "--cols", "40", "--rows", "5");
    expect(opened.code).toBe(0);
    const terminal = jsonOf(opened);
    expect(terminal).toMatchObject({ status: "running", size: { cols: 40, rows: 5 } });
    const typed = await cli("terminal", "input", sessionId, terminal.terminalId, "ze", "--enter");
    expect(typed.code).toBe(0);
    const closed = jsonOf(await cli("terminal", "close", sessionId, terminal.terminalId, "--signal", "SIGTERM"));
    expect(closed.status).toBe("exited");
    const page = jsonOf(await cli("terminal", "output", sessionId, terminal.terminalId));
    expect(page.complete).toBe(true);
    const listed = jsonOf(await cli("terminal", "list", sessionId));
    expect(listed.map((entry: { terminalId: string }) => entry.terminalId)).toEqual([terminal.terminalId]);
    const display = await cli("terminal", "display", sessionId, terminal.terminalId);
    expect(display.code).toBe(0);
    expect(jsonOf(display)).toMatchObject({ size: { cols: 40, rows: 5 }, truncated: false });
    const text = await cli("terminal", "display", sessionId, terminal.terminalId, "--text");
    expect(text.code).toBe(0);
  });

  it("refuses the display of a running terminal with one error line", async () => {
    home = tempHome();
    serve = await startServe([], home.env, home.root);
    const cli = (...args: string[]) => runCli([...args, "--remote", serve!.url], { env: home.env, cwd: home.root });
    const sessionId = jsonOf(await cli("session", "create")).id as string;
    const terminal = jsonOf(await cli("terminal", "open", sessionId, "--exec", "read _"));
    const refused = await cli("terminal", "display", sessionId, terminal.terminalId);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^error: ConflictError: .*still running/);
    await cli("terminal", "close", sessionId, terminal.terminalId);
  });
});
