// Images in the composer: Ctrl+V / Ctrl+X V read the local clipboard through real (fake)
// `wl-paste` / `xclip` executables first on PATH; a pasted or dropped image path attaches the
// file; /image, /base64 and /send; Ctrl+X R; the images reach the model's request, stay after a
// failed submission and clear on a Session switch; Esc cancels a pending clipboard read.
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { KEY, tuiPerTest, type Tui } from "./support.js";
import { ONE_PIXEL_PNG as PNG } from "../support/png.js";

// images.maxBase64Bytes: the 1×1 PNG fits, BIG_PNG does not (the server refuses it).
const { harness, open } = tuiPerTest({ config: { images: { maxBase64Bytes: { kind: "finite", value: 1000 } } } });

// A 1×1 PNG, a GIF header, and a PNG too big for the configured cap.
const GIF = "R0lGODlhAQABAAAAACw=";
const BIG_PNG = Buffer.concat([PNG, Buffer.alloc(2000)]);
const PNG_URL = `data:image/png;base64,${PNG.toString("base64")}`;

const CTRL_V = "\u0016";

let tools: string;
let saved: NodeJS.ProcessEnv;

beforeEach(() => {
  tools = mkdtempSync(join(tmpdir(), "ze-clipboard-"));
  saved = { ...process.env };
  delete process.env["WAYLAND_DISPLAY"];
  delete process.env["DISPLAY"];
});

afterEach(() => {
  process.env = saved;
  rmSync(tools, { recursive: true, force: true });
});

/** A fake clipboard tool: logs its arguments, answers each argument string from `answers` (a file to print, or a shell line). */
function fakeTool(name: "wl-paste" | "xclip", answers: Record<string, string>): void {
  const cases = Object.entries(answers)
    .map(([args, answer]) => `  "${args}") ${answer} ;;`)
    .join("\n");
  const script = `#!/bin/sh\necho "$*" >> "${tools}/calls"\ncase "$*" in\n${cases}\n  *) echo "unexpected arguments: $*" >&2; exit 2 ;;\nesac\n`;
  writeFileSync(join(tools, name), script);
  chmodSync(join(tools, name), 0o755);
  process.env["PATH"] = `${tools}:${saved["PATH"] ?? ""}`;
}

const calls = (): string[] => readFileSync(join(tools, "calls"), "utf8").trim().split("\n");

type ChatMessage = { role: string; content: unknown };
/** The last user message the model received. */
const lastUserContent = (): unknown =>
  (harness().model.requests.at(-1)!.body as { messages: ChatMessage[] }).messages.filter((message) => message.role === "user").at(-1)!.content;

const settled = (tui: Tui, text: RegExp): Promise<string> => tui.waitFor(new RegExp(`${text.source}[\\s\\S]*test/scripted · \\d`));

describe("the clipboard", () => {
  it("Ctrl+V on the opening screen attaches wl-paste's PNG; Enter sends it with the text to the model", async () => {
    writeFileSync(join(tools, "shot.png"), PNG);
    writeFileSync(join(tools, "types"), "text/html\nimage/png\n");
    fakeTool("wl-paste", { "--list-types": `cat "${tools}/types"`, "--no-newline --type image/png": `cat "${tools}/shot.png"` });
    process.env["WAYLAND_DISPLAY"] = "wayland-test";
    const tui = await open();
    await tui.press(CTRL_V);
    await tui.waitFor(/\[image 1\] clipboard\.png · image\/png · 68 B/);
    expect(calls()).toEqual(["--list-types", "--no-newline --type image/png"]);
    await tui.submit("@say I see a pixel.");
    const frame = await settled(tui, /I see a pixel\./);
    expect(frame).not.toContain("[image 1]");
    expect(lastUserContent()).toEqual([
      { type: "text", text: "@say I see a pixel." },
      { type: "image_url", image_url: { url: PNG_URL } },
    ]);
  });

  it("Ctrl+X V reads xclip: without an image target its text goes into the draft", async () => {
    fakeTool("xclip", {
      "-selection clipboard -t TARGETS -o": "printf 'TARGETS\\nUTF8_STRING\\nSTRING\\n'",
      "-selection clipboard -t UTF8_STRING -o": "printf 'pasted from X'",
    });
    process.env["DISPLAY"] = ":99";
    const tui = await open();
    await tui.press("say: ", KEY.ctrlX, "v");
    await tui.waitFor(/say: pasted from X/);
    expect(calls()).toEqual(["-selection clipboard -t TARGETS -o", "-selection clipboard -t UTF8_STRING -o"]);
    expect(tui.controller.state.attachments).toEqual([]);
  });

  it("xclip's image target is read as an image (also on a Session's screen)", async () => {
    writeFileSync(join(tools, "shot.png"), PNG);
    fakeTool("xclip", { "-selection clipboard -t TARGETS -o": "printf 'TARGETS\\nimage/png\\n'", "-selection clipboard -t image/png -o": `cat "${tools}/shot.png"` });
    process.env["DISPLAY"] = ":99";
    const tui = await open();
    await tui.submit("@say First.");
    await settled(tui, /First\./);
    await tui.press(CTRL_V);
    await tui.waitFor(/\[image 1\] clipboard\.png · image\/png/);
    await tui.press(KEY.enter); // the image alone
    await settled(tui, /echo:/);
    expect(lastUserContent()).toEqual([{ type: "image_url", image_url: { url: PNG_URL } }]);
  });

  it("without a display, or without the tool, a one-line notice and nothing changes", async () => {
    const tui = await open();
    await tui.press("draft", CTRL_V);
    await tui.waitFor(/no graphical clipboard here \(neither WAYLAND_DISPLAY nor DISPLAY is set\)/);
    process.env["DISPLAY"] = ":99";
    process.env["PATH"] = tools; // no xclip in it
    await tui.press(CTRL_V);
    await tui.waitFor(/cannot read the clipboard: install xclip/);
    expect(tui.controller.state.draft).toBe("draft");
    expect(tui.controller.state.attachments).toEqual([]);
  });

  it("Esc cancels a pending clipboard read before its other meanings; the draft stays", async () => {
    fakeTool("wl-paste", { "--list-types": "exec sleep 60" });
    process.env["WAYLAND_DISPLAY"] = "wayland-test";
    const tui = await open();
    await tui.press("keep me", CTRL_V);
    await tui.waitFor(/reading the clipboard… \(Esc cancels\)/);
    await tui.press(KEY.escape);
    await tui.waitFor(/paste cancelled/);
    expect(tui.controller.state).toMatchObject({ draft: "keep me", pasting: false, attachments: [] });
  });
});

describe("pasted paths and draft commands", () => {
  it("a pasted path (plain, quoted, escaped, file:// URL, relative, bracketed) attaches the image; Enter sends them alone", async () => {
    const h = harness();
    const dir = join(h.home.root, "shots");
    mkdirSync(dir);
    writeFileSync(join(dir, "my shot.png"), PNG);
    writeFileSync(join(dir, "b.png"), PNG);
    writeFileSync(join(dir, "fake.png"), "not an image at all");
    const tui = await open();
    await tui.press(`'${join(dir, "my shot.png")}'`);
    await tui.waitFor(/\[image 1\] my shot\.png · image\/png · 68 B/);
    await tui.press(join(dir, "my\\ shot.png"), pathToFileURL(join(dir, "b.png")).href, "shots/b.png", `\u001b[200~${join(dir, "b.png")}\u001b[201~`);
    await tui.waitFor(/\[image 5\] b\.png/);
    // A path to a file that is not an image, and other text, are typed as text.
    await tui.press(join(dir, "fake.png"));
    await tui.waitFor(/fake\.png/);
    expect(tui.controller.state.draft).toBe(join(dir, "fake.png"));
    expect(tui.controller.state.attachments).toHaveLength(5);
    for (let count = 0; count < join(dir, "fake.png").length; count++) await tui.press(KEY.backspace);
    await tui.press(KEY.enter);
    await settled(tui, /echo:/);
    expect(lastUserContent()).toEqual(Array.from({ length: 5 }, () => ({ type: "image_url", image_url: { url: PNG_URL } })));
  });

  it("a bracketed paste of text goes into the draft whole (its newline does not send)", async () => {
    const tui = await open();
    await tui.press("\u001b[200~first line\rsecond line\r\u001b[201~");
    await tui.until(() => tui.controller.state.draft === "first line\nsecond line\n");
    expect(harness().model.requests).toHaveLength(0);
  });

  it("a bracketed paste into an overlay (Open a Session) arrives without its markers", async () => {
    const tui = await open();
    await tui.press(KEY.ctrlX, "o");
    await tui.waitFor(/Open a Session/);
    await tui.press("\u001b[200~550e8400-e29b-41d4-a716-446655440000\r\u001b[201~");
    await tui.until(() => {
      const overlay = tui.controller.state.overlay;
      return overlay?.kind === "open" && overlay.text === "550e8400-e29b-41d4-a716-446655440000";
    });
  });

  it("/image, /base64 and /send attach and send; Ctrl+X R removes the last image", async () => {
    const h = harness();
    writeFileSync(join(h.home.root, "pixel"), PNG); // no extension: told by its magic bytes
    const tui = await open();
    await tui.press("/ima");
    await tui.waitFor(/› \/image PATH — attach a PNG, JPEG, GIF or WebP file/);
    await tui.press(KEY.escape);
    for (let count = 0; count < 4; count++) await tui.press(KEY.backspace);
    await tui.submit("/image pixel");
    await tui.waitFor(/\[image 1\] pixel · image\/png · 68 B/);
    await tui.submit(`/base64 ${GIF} image/gif`);
    await tui.waitFor(/\[image 2\] base64 image · image\/gif · 14 B/);
    await tui.submit(`/base64 ${GIF} image/png`);
    await tui.waitFor(/\/base64: the data is image\/gif, not image\/png/);
    await tui.submit("/base64 bm90IGFuIGltYWdl");
    await tui.waitFor(/base64 image is not a PNG, JPEG, GIF or WebP image/);
    await tui.submit("/base64 %%%");
    await tui.waitFor(/\/base64: DATA is not base64/);
    await tui.submit("/image missing.png");
    await tui.waitFor(/cannot read missing\.png: ENOENT/);
    await tui.submit(`/base64 ${PNG.toString("base64")}`);
    await tui.waitFor(/\[image 3\] base64 image · image\/png/);
    await tui.press(KEY.ctrlX, "r");
    await tui.waitFor(/removed \[image 3\] base64 image/);
    expect(tui.frame()).not.toMatch(/^ \[image 3\]/m);
    expect(tui.controller.state.attachments).toHaveLength(2);
    await tui.submit("/send @say Two images.");
    await settled(tui, /Two images\./);
    expect(lastUserContent()).toEqual([
      { type: "text", text: "@say Two images." },
      { type: "image_url", image_url: { url: PNG_URL } },
      { type: "image_url", image_url: { url: `data:image/gif;base64,${GIF}` } },
    ]);
    expect(tui.controller.state.attachments).toEqual([]);
    await tui.submit("/send");
    await tui.waitFor(/nothing to send: type a prompt or attach an image/);
  });

  it("images stay attached when the server refuses the prompt (images.maxBase64Bytes), and clear on a Session switch", async () => {
    const h = harness();
    writeFileSync(join(h.home.root, "big.png"), BIG_PNG);
    const tui = await open();
    await tui.submit("@say Started.");
    await settled(tui, /Started\./);
    const before = h.model.requests.length;
    await tui.submit("/image big.png");
    await tui.waitFor(/\[image 1\] big\.png · image\/png · 2 KB/);
    await tui.submit("look at this");
    await tui.waitFor(/the limit \(images\.maxBase64Bytes\) is\s+1000/);
    // The refused prompt is back in the composer with its image.
    expect(tui.frame()).toContain("[image 1] big.png");
    expect(tui.controller.state.draft).toBe("look at this");
    expect(h.model.requests.length).toBe(before);
    await tui.press(KEY.ctrlX, "n");
    await tui.until(() => tui.controller.state.attachments.length === 0);
    expect(tui.frame()).not.toContain("[image 1]");
  });

  it("/queue TEXT carries the attached images too", async () => {
    const tui = await open();
    await tui.submit(`/base64 ${GIF}`);
    await tui.waitFor(/\[image 1\] base64 image · image\/gif/);
    await tui.submit("/queue @say Queued with a picture.");
    await settled(tui, /Queued with a picture\./);
    expect(lastUserContent()).toEqual([
      { type: "text", text: "@say Queued with a picture." },
      { type: "image_url", image_url: { url: `data:image/gif;base64,${GIF}` } },
    ]);
    expect(tui.controller.state.attachments).toEqual([]);
  });

  it("a follow-up on the running Turn carries its images to the model", async () => {
    const h = harness();
    writeFileSync(join(h.home.root, "pixel.png"), PNG);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let answered = 0;
    h.model.reply(async () => {
      const count = ++answered;
      if (count === 1) await held;
      return { events: [{ type: "text", text: `answer ${count}` }] };
    });
    const tui = await open();
    await tui.submit("first");
    await tui.waitFor(/working/);
    await tui.submit("/image pixel.png");
    await tui.waitFor(/\[image 1\] pixel\.png/);
    await tui.submit("and this picture");
    await tui.until(() => tui.controller.state.attachments.length === 0);
    release();
    await settled(tui, /answer 2/);
    const content = JSON.stringify((h.model.requests[1]!.body as { messages: ChatMessage[] }).messages);
    expect(content).toContain("and this picture");
    expect(content).toContain(PNG_URL);
  });
});

describe("the composer", () => {
  it("Shift+Enter as CSI-u (ESC [13;2u) and as modifyOtherKeys (ESC [27;2;13~) makes a newline, also with the suggestion menu open", async () => {
    const tui = await open();
    await tui.press("line one", "\u001b[13;2u", "line two", "\u001b[27;2;13~", "line three");
    await tui.until(() => tui.controller.state.draft === "line one\nline two\nline three");
    for (let count = 0; count < "line one\nline two\nline three".length; count++) await tui.press(KEY.backspace);
    await tui.press("/", "\u001b[13;2u");
    await tui.until(() => tui.controller.state.draft === "/\n");
    expect(harness().model.requests).toHaveLength(0);
  });
});
