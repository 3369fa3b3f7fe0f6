// Plain text of a terminal, read off a real @xterm/headless emulator: soft wraps joined (the
// display marks the row that continues on the next one), wide characters once, trailing blanks
// dropped, a last full-screen view after the normal screen, the live tail's `truncated`.
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { readDisplay, scrollbackRows, type EmulatorView } from "../../services/workspace/terminals/display.js";
import { FULL_SCREEN_HEADING, displayText, liveTail, type LiveBufferView } from "../../services/workspace/terminals/plain.js";

const require = createRequire(import.meta.url);
const { Terminal } = require("@xterm/headless") as { Terminal: new (options: Record<string, unknown>) => EmulatorView & { write(data: string, callback: () => void): void } };

async function emulator(cols: number, rows: number, data: string) {
  const terminal = new Terminal({ cols, rows, scrollback: scrollbackRows(cols), allowProposedApi: true });
  await new Promise<void>((resolve) => terminal.write(data, resolve));
  return terminal;
}

describe("terminal plain text", () => {
  it("joins soft-wrapped rows, keeps wide characters once and drops trailing blanks", async () => {
    const terminal = await emulator(10, 5, "abcdefghijKLM\r\n\u001b[31m中文\u001b[0m ok   \r\n\r\n");
    const display = readDisplay(terminal);
    expect(display.rows.slice(0, 3).map((row) => row.wrapped)).toEqual([true, false, false]);
    expect(displayText(display)).toEqual({ text: "abcdefghijKLM\n中文 ok", historyFull: false });
    expect(liveTail(terminal.buffer.active as unknown as LiveBufferView, 100)).toEqual({ text: "abcdefghijKLM\n中文 ok", truncated: false });
    // A tail cut below the first rows says so.
    expect(liveTail(terminal.buffer.active as unknown as LiveBufferView, 3)).toEqual({ text: "中文 ok", truncated: true });
    // A cut through a wrapped line starts mid-line.
    expect(liveTail(terminal.buffer.active as unknown as LiveBufferView, 4)).toEqual({ text: "KLM\n中文 ok", truncated: true });
  });

  it("adds a full-screen view still shown at the end after the normal screen", async () => {
    // The emulator clears the alternate screen when the program leaves it: only the normal screen remains.
    const left = await emulator(20, 4, "before\r\n\u001b[?1049h\u001b[Hmenu: pick one\u001b[?1049lafter\r\n");
    expect(displayText(readDisplay(left)).text).toBe("before\nafter");
    const still = await emulator(20, 4, "before\r\n\u001b[?1049h\u001b[Hediting");
    expect(displayText(readDisplay(still)).text).toBe(`before\n${FULL_SCREEN_HEADING}\nediting`);
  });

  it("says when the emulator's history is full", async () => {
    const lines = Array.from({ length: scrollbackRows(80) + 100 }, (_, index) => String(index)).join("\r\n");
    const plain = displayText(readDisplay(await emulator(80, 24, lines)));
    expect(plain.historyFull).toBe(true);
    expect(plain.text.split("\n").at(-1)).toBe(String(scrollbackRows(80) + 99));
    expect(displayText(readDisplay(await emulator(80, 24, "short\r\n"))).historyFull).toBe(false);
  });
});
