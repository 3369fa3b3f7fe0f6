// Reads the local clipboard of the machine running the TUI (also with --remote): an image when
// it holds one (PNG, JPEG, GIF, WebP), otherwise its text. Linux: `wl-paste` (wl-clipboard)
// when WAYLAND_DISPLAY is set, `xclip` when DISPLAY is set. Tools run without a shell
// (argument arrays), with a timeout, a byte cap and an AbortSignal (Esc cancels a pending paste).
import { execFile, spawn } from "node:child_process";

export type ClipboardContent = { readonly kind: "image"; readonly bytes: Buffer; readonly mimeType: string } | { readonly kind: "text"; readonly text: string };

export interface ClipboardOptions {
  readonly env: NodeJS.ProcessEnv;
  readonly signal: AbortSignal;
  /** The most bytes read from one tool's output. */
  readonly maxBytes: number;
  readonly platform?: NodeJS.Platform;
  readonly timeoutMs?: number;
}

/** The clipboard cannot be read here; the message says why and what to do. */
export class ClipboardUnavailable extends Error {}

const IMAGE_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"];
const TEXT_TARGETS = ["UTF8_STRING", "text/plain;charset=utf-8", "text/plain", "STRING", "TEXT"];

/** The clipboard's text type to read: plain UTF-8 first. */
const textType = (types: readonly string[]): string =>
  TEXT_TARGETS.find((type) => types.includes(type)) ?? types.find((type) => type.startsWith("text/plain")) ?? types.find((type) => type.startsWith("text/")) ?? "text/plain";

interface Tool {
  readonly command: string;
  readonly install: string;
  /** Arguments that list the clipboard's types, one a line. */
  readonly list: readonly string[];
  readonly read: (type: string) => readonly string[];
  readonly readText: (types: readonly string[]) => readonly string[];
}

const WL_PASTE: Tool = {
  command: "wl-paste",
  install: "wl-paste (wl-clipboard)",
  list: ["--list-types"],
  read: (type) => ["--no-newline", "--type", type],
  readText: (types) => ["--no-newline", "--type", textType(types)],
};

const XCLIP: Tool = {
  command: "xclip",
  install: "xclip",
  list: ["-selection", "clipboard", "-t", "TARGETS", "-o"],
  read: (type) => ["-selection", "clipboard", "-t", type, "-o"],
  readText: (types) => ["-selection", "clipboard", "-t", types.includes("UTF8_STRING") ? "UTF8_STRING" : "STRING", "-o"],
};

/** Runs one tool; undefined when it is not installed. */
function run(tool: Tool, args: readonly string[], options: ClipboardOptions): Promise<Buffer | undefined> {
  const timeout = options.timeoutMs ?? 5_000;
  return new Promise((resolve, reject) => {
    execFile(
      tool.command,
      [...args],
      { encoding: "buffer", env: options.env, timeout, maxBuffer: options.maxBytes, signal: options.signal, windowsHide: true },
      (error, stdout, stderr) => {
        if (!error) return resolve(stdout);
        const failure = error as NodeJS.ErrnoException & { killed?: boolean; code?: string | number };
        if (failure.code === "ENOENT") return resolve(undefined);
        if (failure.name === "AbortError" || options.signal.aborted) return reject(new ClipboardUnavailable("paste cancelled"));
        if (failure.code === "ERR_CHILD_PROCESS_STDIO_MAXBUFFER") return reject(new Error(`the clipboard holds more than ${options.maxBytes} bytes, more than one prompt can carry`));
        if (failure.killed) return reject(new Error(`${tool.command} did not answer within ${timeout / 1000} s`));
        const said = stderr.toString("utf8").trim().split("\n")[0] ?? "";
        reject(new Error(`${tool.command} failed${said ? `: ${said}` : ` (exit ${String(failure.code)})`}`));
      },
    );
  });
}

/** The clipboard through one tool; undefined when the tool is not installed. */
async function readWith(tool: Tool, options: ClipboardOptions): Promise<ClipboardContent | undefined> {
  let listed: Buffer | undefined;
  try {
    listed = await run(tool, tool.list, options);
  } catch (error) {
    // wl-paste and xclip fail when nothing is copied.
    if (error instanceof ClipboardUnavailable) throw error;
    throw new ClipboardUnavailable(`the clipboard is empty (${(error as Error).message})`);
  }
  if (listed === undefined) return undefined;
  const types = listed
    .toString("utf8")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "");
  const image = IMAGE_TYPES.find((type) => types.includes(type));
  if (image !== undefined) {
    const bytes = await run(tool, tool.read(image), options);
    if (bytes === undefined) return undefined;
    return { kind: "image", bytes, mimeType: image };
  }
  if (!types.some((type) => TEXT_TARGETS.includes(type) || type.startsWith("text/"))) {
    throw new ClipboardUnavailable(`the clipboard holds neither a PNG, JPEG, GIF or WebP image nor text (${types.slice(0, 4).join(", ") || "no types"})`);
  }
  const text = await run(tool, tool.readText(types), options);
  return text === undefined ? undefined : { kind: "text", text: text.toString("utf8") };
}

/** The clipboard's image or text; a ClipboardUnavailable error names why it cannot be read. */
export async function readClipboard(options: ClipboardOptions): Promise<ClipboardContent> {
  const platform = options.platform ?? process.platform;
  if (platform !== "linux" && platform !== "freebsd" && platform !== "openbsd") {
    throw new ClipboardUnavailable(`reading the clipboard is not supported on ${platform} yet; paste or drop an image file path instead`);
  }
  const wayland = (options.env["WAYLAND_DISPLAY"] ?? "") !== "";
  const x11 = (options.env["DISPLAY"] ?? "") !== "";
  if (!wayland && !x11) throw new ClipboardUnavailable("no graphical clipboard here (neither WAYLAND_DISPLAY nor DISPLAY is set); paste an image file path instead");
  const tools = [...(wayland ? [WL_PASTE] : []), ...(x11 ? [XCLIP] : [])];
  for (const tool of tools) {
    const content = await readWith(tool, options);
    if (content !== undefined) return content;
  }
  throw new ClipboardUnavailable(`cannot read the clipboard: install ${tools.map((tool) => tool.install).join(" or ")}`);
}

/** A tool that copies its stdin to the clipboard. */
interface CopyTool {
  readonly command: string;
  readonly args: readonly string[];
}

/** The copy tools to try here, in order (the TUI also writes OSC 52, which works over SSH). */
export function copyTools(env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): CopyTool[] {
  if (platform === "darwin") return [{ command: "pbcopy", args: [] }];
  if (platform === "win32") return [{ command: "powershell.exe", args: ["-NoProfile", "-Command", "Set-Clipboard -Value ([Console]::In.ReadToEnd())"] }];
  const tools: CopyTool[] = [];
  if ((env["WAYLAND_DISPLAY"] ?? "") !== "") tools.push({ command: "wl-copy", args: [] });
  if ((env["DISPLAY"] ?? "") !== "") tools.push({ command: "xclip", args: ["-selection", "clipboard", "-in"] }, { command: "xsel", args: ["--clipboard", "--input"] });
  // WSL: Windows' PowerShell reaches the Windows clipboard.
  if ((env["WSL_DISTRO_NAME"] ?? "") !== "") tools.push({ command: "powershell.exe", args: ["-NoProfile", "-Command", "Set-Clipboard -Value ([Console]::In.ReadToEnd())"] });
  return tools;
}

/** Copies `text` with the first tool that is installed and succeeds; its name, or undefined when none did. */
export async function writeClipboard(text: string, env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): Promise<string | undefined> {
  for (const tool of copyTools(env, platform)) {
    const ok = await new Promise<boolean>((resolve) => {
      // stdout and stderr ignored and 'exit' awaited: xclip stays in the background to serve the
      // selection, holding inherited pipes open.
      const child = spawn(tool.command, [...tool.args], { env, stdio: ["pipe", "ignore", "ignore"], windowsHide: true });
      const timer = setTimeout(() => child.kill(), 5_000);
      child.once("error", () => (clearTimeout(timer), resolve(false)));
      child.once("exit", (code) => (clearTimeout(timer), resolve(code === 0)));
      child.stdin.on("error", () => undefined);
      child.stdin.end(text);
    });
    if (ok) return tool.command;
  }
  return undefined;
}
