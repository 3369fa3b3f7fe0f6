// The built TUI in a real PTY, read through a headless xterm: resizing while a Turn streams (and
// Ctrl+L) repaints cleanly, the header names the model the next Turn really uses after a reopen,
// quitting prints how to resume, switching Sessions replaces the conversation on screen, answers
// render as Markdown (and without colour under --no-color), a queued follow-up shows at once and
// a cancel's notice goes once the Turn settles.
import { describe, expect, it } from "vitest";
import { assertBuilt, jsonOf, runCli } from "../support/cli.js";
import { testProviderConfig, writeGlobalConfig } from "../support/model.js";
import { ptyTuiPerTest } from "./pty-support.js";

assertBuilt();

const t = ptyTuiPerTest();
const count = (screen: string, pattern: RegExp): number => screen.split("\n").filter((line) => pattern.test(line)).length;

describe("the TUI screen", () => {
  it("resizing while a Turn streams (narrower, wider, several times) and Ctrl+L leave one header, one status row and the transcript once", async () => {
    t.model.enqueue({ events: [{ type: "text", text: "ALPHA streaming words of the answer that fill a long line across the wide terminal before it is narrowed." }, { type: "delay", ms: 4000 }, { type: "text", text: " OMEGA." }] });
    const cli = t.pty(["--embedded"], undefined, { cols: 140, rows: 30 });
    await cli.waitFor(/Ask anything/);
    cli.write("first prompt\r");
    await cli.waitFor(/ALPHA streaming/);
    for (const [cols, rows] of [[80, 30], [140, 30], [60, 24], [100, 30]] as const) {
      cli.resize(cols, rows);
      await cli.waitFor(/working/);
    }
    await cli.waitFor(/OMEGA\.[\s\S]*test\/scripted · \d/, 20_000);
    await cli.waitFor(/Enter send/);
    const resized = cli.screen();
    expect(count(resized, /│ ze /)).toBe(1);
    expect(count(resized, /Enter send · \/ commands/)).toBe(1);
    expect(resized.match(/ALPHA/g)).toHaveLength(1);
    expect(resized.match(/› you first prompt/g)).toHaveLength(1);
    const mark = cli.raw().length;
    cli.write("\u000cz"); // Ctrl+L, then a key to know it was handled
    await cli.waitFor(/│ z /);
    expect(cli.raw().slice(mark)).toContain("\u001b[2J\u001b[3J\u001b[H");
    const screen = cli.screen();
    expect(count(screen, /│ ze /)).toBe(1);
    expect(count(screen, /Enter send · \/ commands/)).toBe(1);
    expect(count(screen, /── Session · /)).toBe(1);
    expect(screen.match(/ALPHA/g)).toHaveLength(1);
    expect(screen.match(/OMEGA/g)).toHaveLength(1);
    expect(screen.match(/› you first prompt/g)).toHaveLength(1);
  }, 60_000);

  it("the model picked with /models is the one the next Turn uses after a reopen, as the header says; quitting prints how to resume", async () => {
    const providers = testProviderConfig(t.model) as { test: { definition: { models: Record<string, unknown> } } };
    providers.test.definition.models["fake-model-mini"] = { displayName: "Mini", limits: { contextUnits: 100000, outputUnits: 4096 } };
    writeGlobalConfig(t.home, { model: "test/scripted", providers });
    const first = t.pty(["--embedded"]);
    await first.waitFor(/Ask anything/);
    first.write("/models fake-model-mini\r");
    await first.waitFor(/› test\/fake-model-mini/);
    first.write("\r");
    await first.waitFor(/test\/fake-model-mini · (default agent|build)/);
    first.write("@say Mini answer.\r");
    await first.waitFor(/Mini answer\.\n+test\/fake-model-mini · \d/);
    first.write("\u0003");
    await first.exited;
    const listed = await runCli(["session", "list", "--all", "--embedded"], { env: t.home.env, cwd: t.home.root });
    const id = jsonOf<{ id: string }[]>(listed)[0]!.id;

    const second = t.pty(["--embedded", "-s", id]);
    await second.waitFor(/Mini answer\./);
    await second.waitFor(/│ ze [0-9a-f]{8} .*test\/fake-model-mini · (default agent|build)/);
    second.write("@say Second answer.\r");
    await second.waitFor(/Second answer\.\n+test\/fake-model-mini · \d/);
    expect(t.model.requests.at(-1)?.body).toMatchObject({ model: "fake-model-mini" });
    expect(first.screen()).toContain(`Resume this Session with: ze-harness -s ${id}`);

    // Ctrl+X N: a new Session replaces the conversation on screen; its banner names it.
    second.write("\u0018n");
    await second.waitFor(/── Session · [0-9a-f-]{36} ──/);
    await second.waitFor(/Send a prompt/);
    expect(second.screen()).not.toContain("Mini answer.");
    const banner = /── Session · ([0-9a-f-]{36}) ──/.exec(second.screen())![1]!;
    expect(banner).not.toBe(id);
    second.write("\u0018q");
    await second.exited;
    expect(second.screen()).toContain(`Resume this Session with: ze-harness -s ${banner}`);
  }, 90_000);

  it("renders Markdown: headings, emphasis, lists, code blocks with colour, tables; --no-color has none", async () => {
    const answer = "# Plan\n\nSome **bold** and *soft* words, see [docs](http://example.test).\n\n- first item\n- second item\n\n```js\nconst answer = 42;\n```\n\n| name | value |\n|------|-------|\n| x | 1 |\n";
    t.model.enqueue({ events: [{ type: "text", text: answer }] }, { events: [{ type: "text", text: answer }] });
    const cli = t.pty(["--embedded"]);
    await cli.waitFor(/Ask anything/);
    cli.write("markdown please\r");
    await cli.waitFor(/│ name │ value │/);
    const screen = cli.screen();
    expect(screen).toContain("Some bold and soft words");
    expect(screen).not.toContain("**bold**");
    expect(screen).not.toContain("```");
    expect(screen).not.toMatch(/^# Plan/m);
    expect(screen).toMatch(/\* first item/);
    expect(cli.raw()).toMatch(/\u001b\[\d+mconst\u001b\[\d+m/); // the keyword is coloured

    const plain = t.pty(["--embedded", "tui", "--no-color"]);
    await plain.waitFor(/Ask anything/);
    const before = plain.raw().length;
    plain.write("markdown please\r");
    await plain.waitFor(/│ name │ value │/);
    expect(plain.raw().slice(before)).not.toMatch(/\u001b\[(3\d|9\d|1|3|4)(;\d+)*m/);
    expect(plain.screen()).toContain("Some bold and soft words");
  }, 60_000);

  it("a follow-up shows as queued at once and as applied later; Esc's cancel notice goes once the Turn settles", async () => {
    t.model.enqueue(
      { events: [{ type: "text", text: "WORKING on it." }, { type: "delay", ms: 3000 }, { type: "text", text: " Done." }] },
      { events: [{ type: "text", text: "APPLIED the follow-up." }] },
      { events: [{ type: "text", text: "LONG task." }, { type: "delay", ms: 30000 }] },
    );
    const cli = t.pty(["--embedded"]);
    await cli.waitFor(/Ask anything/);
    cli.write("start\r");
    await cli.waitFor(/WORKING on it\./);
    cli.write("also this\r");
    await cli.waitFor(/↳ queued: also this/);
    await cli.waitFor(/APPLIED the follow-up\.[\s\S]*test\/scripted · \d/, 20_000);
    expect(cli.screen()).not.toContain("↳ queued: also this");
    expect(cli.screen()).toMatch(/↳ also this/);

    cli.write("another\r");
    await cli.waitFor(/LONG task\./);
    cli.write("\u001b");
    await cli.waitFor(/cancelled/);
    await cli.waitFor(/Enter send/);
    expect(cli.screen()).not.toContain("cancelling the running Turn");
  }, 60_000);
});
