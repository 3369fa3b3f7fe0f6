// The built TUI in a real PTY: SGR mouse reports (a click on the short Session id, a drag over
// the answer, a click on a tool row) copy through a fake `xclip` on PATH and an OSC 52 escape, or
// expand the row; `/mouse off` hands selection back to the terminal. The API key of Connect
// provider is typed on the suspended terminal: it never shows, and no file but auth.json (0600)
// holds it.
import { chmodSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { assertBuilt } from "../support/cli.js";
import { writeGlobalConfig } from "../support/model.js";
import { keyedProvider } from "../providers/provider-harness.js";
import { ptyTuiPerTest } from "./pty-support.js";
import { ONE_PIXEL_PNG } from "../support/png.js";

assertBuilt();

const t = ptyTuiPerTest();

/** A fake `xclip` that appends what it is given to `out` (one copy a line of JSON). */
function fakeXclip(): { env: Record<string, string>; copies: () => string[] } {
  const bin = join(t.home.dir, "bin");
  mkdirSync(bin, { recursive: true });
  const out = join(t.home.dir, "xclip.out");
  writeFileSync(join(bin, "xclip"), `#!/bin/sh\n[ "$1 $2 $3" = "-selection clipboard -in" ] || exit 3\n${process.execPath} -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>require("fs").appendFileSync(${JSON.stringify(out)},JSON.stringify(s)+"\\n"))'\n`);
  chmodSync(join(bin, "xclip"), 0o755);
  return {
    env: { ...t.home.env, PATH: `${bin}:${process.env["PATH"] ?? ""}`, DISPLAY: ":99" },
    copies: () => {
      try {
        return readFileSync(out, "utf8").trim().split("\n").filter(Boolean).map((line) => JSON.parse(line) as string);
      } catch {
        return [];
      }
    },
  };
}

const press = (x: number, y: number): string => `\u001b[<0;${x + 1};${y + 1}M`;
const release = (x: number, y: number): string => `\u001b[<0;${x + 1};${y + 1}m`;
const osc52 = (text: string): string => `\u001b]52;c;${Buffer.from(text).toString("base64")}\u0007`;

describe("the mouse", () => {
  it("a click on the short Session id copies the full id; a drag copies the text; both also by OSC 52", async () => {
    const clip = fakeXclip();
    const cli = t.pty(["--embedded"], clip.env);
    await cli.waitFor(/Ask anything/);
    expect(cli.raw()).toContain("\u001b[?1006h"); // SGR mouse reporting on
    cli.write("@say Copy this sentence please.\r");
    await cli.waitFor(/Copy this sentence please\.\n+test\/scripted · \d/);
    const banner = /── Session · ([0-9a-f-]{36}) ──/.exec(cli.screen());
    expect(banner).not.toBeNull();
    const id = banner![1]!;
    const short = await cli.locate(`ze ${id.slice(0, 8)}`);
    cli.write(press(short.x + 4, short.y) + release(short.x + 4, short.y));
    await cli.waitFor(/copied the Session id/);
    expect(clip.copies()).toContain(id);
    expect(cli.raw()).toContain(osc52(id));

    const at = await cli.locate("Copy this sentence");
    cli.write(press(at.x, at.y) + `\u001b[<32;${at.x + 5};${at.y + 1}M` + release(at.x + 17, at.y));
    await cli.waitFor(/copied 18 characters/);
    expect(clip.copies()).toContain("Copy this sentence");
    expect(cli.raw()).toContain(osc52("Copy this sentence"));

    cli.write("/mouse off\r");
    await cli.waitFor(/mouse capture off/);
    expect(cli.raw()).toContain("\u001b[?1006l");
    cli.write("\u0003");
    await cli.exited;
    // Remembered: the next run leaves the mouse to the terminal.
    const next = t.pty(["--embedded"], clip.env);
    await next.waitFor(/Ask anything/);
    expect(next.raw()).not.toContain("\u001b[?1002h");
    next.write("/mouse on\r");
    await next.waitFor(/mouse capture on/);
    expect(next.raw()).toContain("\u001b[?1002h\u001b[?1006h");
  }, 60_000);

  it("a click on a tool row expands its output and a second click folds it", async () => {
    const file = join(t.home.root, "lines.txt");
    writeFileSync(file, Array.from({ length: 8 }, (_, index) => `line number ${index + 1}`).join("\n"));
    // The output stays in the live area while the Turn waits on a second call's approval (a file outside the workdir).
    const outside = join(t.home.dir, "outside.txt");
    writeFileSync(outside, "outside");
    const cli = t.pty(["--embedded"]);
    await cli.waitFor(/Ask anything/);
    cli.write(`@call read {"filePath":"${file}"}\n@next\n@call read {"filePath":"${outside}"}\n@then Finished.\r`);
    await cli.waitFor(/line number 2[\s\S]*more lines/, 20_000);
    expect(cli.screen()).not.toContain("line number 7");
    const row = await cli.locate("✓ read");
    cli.write(press(row.x, row.y) + release(row.x, row.y));
    await cli.waitFor(/line number 7/);
    const again = await cli.locate("✓ read");
    cli.write(press(again.x, again.y) + release(again.x, again.y));
    await cli.waitFor(/more lines/);
    cli.write("\u0003");
    await cli.exited;
  }, 60_000);
  it("a click on an attachment removes it", async () => {
    writeFileSync(join(t.home.root, "one.png"), ONE_PIXEL_PNG);
    writeFileSync(join(t.home.root, "two.png"), ONE_PIXEL_PNG);
    const cli = t.pty(["--embedded"]);
    await cli.waitFor(/Ask anything/);
    cli.write("/image one.png\r");
    await cli.waitFor(/\[image 1\] one\.png/);
    cli.write("/image two.png\r");
    await cli.waitFor(/\[image 2\] two\.png/);
    const first = await cli.locate("[image 1] one.png");
    cli.write(press(first.x + 2, first.y) + release(first.x + 2, first.y));
    await cli.waitFor(/\[image 1\] two\.png/);
    expect(cli.screen()).not.toContain("one.png");
    cli.write("\u0003");
    await cli.exited;
  }, 60_000);
});

describe("the API key prompt", () => {
  it("suspends the TUI, reads the key without echo, connects; the key is on no screen and in no file but auth.json (0600)", async () => {
    writeGlobalConfig(t.home, { model: "keyed/m", providers: { keyed: keyedProvider(t.model) } });
    const key = "sk-pty-secret-value-4242";
    const cli = t.pty(["--embedded"]);
    await cli.waitFor(/Connect provider[\s\S]*Keyed test model: API key/);
    cli.write("\r");
    await cli.waitFor(/API key for keyed \(hidden; Enter connects, Ctrl-C cancels\)/);
    expect(cli.screen()).not.toContain("Connect provider"); // Ink is suspended: only the prompt
    cli.write(key);
    cli.write("\r");
    await cli.waitFor(/keyed connected/);
    await cli.waitFor(/keyed\/m · default agent/);
    cli.write("@say Keyed answer.\r");
    await cli.waitFor(/Keyed answer\.\n+keyed\/m · \d/);
    cli.write("\u0003");
    await cli.exited;
    expect(cli.raw()).not.toContain(key);
    expect(cli.screen()).not.toContain(key);
    const holders: string[] = [];
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (entry.isFile() && readFileSync(path).includes(key)) holders.push(path);
      }
    };
    walk(t.home.dir);
    expect(holders.map((path) => path.split("/").pop())).toEqual(["auth.json"]);
    expect(statSync(holders[0]!).mode & 0o777).toBe(0o600);
  }, 60_000);
});
