// The built binary in a real PTY: the TUI turns bracketed paste on (and off again on exit),
// Shift+Enter in the sequences terminals send (CSI-u, modifyOtherKeys) makes newlines, Ctrl+V
// reads a fake `wl-paste` first on PATH, a bracketed paste of a PNG path attaches the file, and
// Enter sends the text and both images to the model — embedded, and with --remote (the
// clipboard is the TUI machine's, not the server's).
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { assertBuilt } from "../support/cli.js";
import { ptyTuiPerTest } from "./pty-support.js";
import { ONE_PIXEL_PNG as PNG } from "../support/png.js";

assertBuilt();

const PNG_URL = `data:image/png;base64,${PNG.toString("base64")}`;

const t = ptyTuiPerTest();
let tools: string;

beforeEach(() => {
  // A fake wl-paste that holds a PNG.
  tools = join(t.home.dir, "tools");
  mkdirSync(tools);
  writeFileSync(join(tools, "clip.png"), PNG);
  writeFileSync(
    join(tools, "wl-paste"),
    `#!/bin/sh\ncase "$*" in\n  "--list-types") printf 'image/png\\ntext/plain\\n' ;;\n  "--no-newline --type image/png") cat "${tools}/clip.png" ;;\n  *) exit 2 ;;\nesac\n`,
  );
  chmodSync(join(tools, "wl-paste"), 0o755);
  writeFileSync(join(t.home.root, "shot.png"), PNG);
});

type ChatMessage = { role: string; content: unknown };

async function attachAndSend(connection: string[]): Promise<void> {
  const cli = t.pty(connection, { ...t.home.env, PATH: `${tools}:${t.home.env["PATH"] ?? ""}`, WAYLAND_DISPLAY: "wayland-test" });
  await cli.waitFor(/Ask anything/);
  expect(cli.raw()).toContain("\u001b[?2004h"); // bracketed paste on
  cli.write("@say Three lines.");
  cli.write("\u001b[13;2u"); // Shift+Enter, CSI-u
  cli.write("line two");
  cli.write("\u001b[27;2;13~"); // Shift+Enter, xterm modifyOtherKeys
  cli.write("line three");
  await cli.waitFor(/│ @say Three lines\.\s+│\n│ line two\s+│\n│ line three/);
  // Every frame replaced the one before: one header, one composer, one status row on the screen
  // (read once a whole frame is drawn: on a loaded machine a frame can be caught half written).
  await cli.waitFor(/╭─+╮\n│ ze [^\n]*│\n╰─+╯\n╭─+╮\n│ @say Three lines\.[\s\S]*Enter send · \/ commands/);
  const screen = cli.screen();
  expect(screen.match(/^│ ze /gm)).toHaveLength(1);
  expect(screen.match(/Enter send · \/ commands/g)).toHaveLength(1);
  cli.write("\u0016"); // Ctrl+V
  await cli.waitFor(/\[image 1\] clipboard\.png · image\/png · 68 B/);
  cli.write(`\u001b[200~${join(t.home.root, "shot.png")}\u001b[201~`);
  await cli.waitFor(/\[image 2\] shot\.png · image\/png · 68 B/);
  const before = t.model.requests.length;
  cli.write("\r");
  await cli.waitFor(/Three lines\.\n+test\/scripted · \d/);
  const messages = (t.model.requests[before]!.body as { messages: ChatMessage[] }).messages;
  expect(messages.filter((message) => message.role === "user").at(-1)!.content).toEqual([
    { type: "text", text: "@say Three lines.\nline two\nline three" },
    { type: "image_url", image_url: { url: PNG_URL } },
    { type: "image_url", image_url: { url: PNG_URL } },
  ]);
  cli.write("\u0003"); // Ctrl+C
  expect((await cli.exited).exitCode).toBe(0);
  const raw = cli.raw();
  expect(raw.lastIndexOf("\u001b[?2004l")).toBeGreaterThan(raw.lastIndexOf("\u001b[?2004h")); // and off again
}

describe("images and Shift+Enter on a terminal", () => {
  it("embedded", async () => {
    await attachAndSend(["--embedded"]);
  }, 60_000);

  it("--remote against a real serve: the clipboard read is the TUI's", async () => {
    await attachAndSend(["--remote", await t.serve()]);
  }, 60_000);
});
