// The mouse (SGR reports, `ESC [ < button ; x ; y M|m`, with drag): a drag selects text and
// copies it; a click on the short Session id copies the full id; a click on an attachment
// removes it; a click on a tool row expands it (or collapses it again), on a task row opens its
// sub-agent. Copying uses the local tools (`wl-copy`/`xclip`/`xsel`, `pbcopy`, PowerShell) and
// an OSC 52 escape, so it also works over SSH. The screen is read back from the terminal mirror.
import type { ToolTurnPart } from "../../../clients/index.js";
import { shortId, toolSummary } from "../format.js";
import { writeClipboard } from "./clipboard.js";
import type { Controller } from "./controller.js";

const SGR = /^\[<(\d+);(\d+);(\d+)([Mm])$/;

/** True when `input` was a mouse report (handled here, whatever it was). */
export function mouseEvent(controller: Controller, input: string): boolean {
  const match = SGR.exec(input);
  if (!match) return false;
  const code = Number(match[1]);
  const at = { x: Number(match[2]) - 1, y: Number(match[3]) - 1 };
  const release = match[4] === "m";
  // Wheel, other buttons and modifiers: not ours.
  if ((code & 64) !== 0 || (code & 3) !== 0) return true;
  if ((code & 32) !== 0) return true; // a drag: the selection ends where the button is released
  if (!release) {
    controller.mouseDown = at;
    return true;
  }
  const down = controller.mouseDown;
  controller.mouseDown = undefined;
  const terminal = controller.terminal;
  if (down === undefined || terminal === undefined) return true;
  const failed = (error: unknown): void => controller.error(error);
  if (down.x !== at.x || down.y !== at.y) {
    void terminal.range(down, at).then((text) => (text.trim() !== "" ? copy(controller, text, `${text.length} characters`) : undefined), failed);
    return true;
  }
  void terminal.line(at.y).then((line) => click(controller, at.x, line), failed);
  return true;
}

/** Copies `text` through OSC 52 and the first local tool that works; the notice says how. */
export async function copy(controller: Controller, text: string, what: string): Promise<void> {
  controller.terminal?.osc52(text);
  const tool = await writeClipboard(text, process.env).catch(() => undefined);
  controller.info(`copied ${what}${tool ? ` (${tool})` : " (OSC 52)"}`);
}

function click(controller: Controller, x: number, line: string): void {
  const sessionId = controller.sessionId;
  if (sessionId !== undefined) {
    const short = shortId(sessionId);
    const start = line.indexOf(short);
    if (start >= 0 && x >= start && x < start + short.length) return void copy(controller, sessionId, `the Session id ${sessionId}`);
  }
  const image = /\[image (\d+)\]/.exec(line);
  if (image && controller.state.overlay === undefined) {
    const index = Number(image[1]) - 1;
    const attachments = controller.state.attachments;
    if (attachments[index] !== undefined) return controller.update({ attachments: attachments.filter((_, position) => position !== index) });
  }
  const part = toolAt(controller, line);
  if (!part) return;
  const child = part.activity?.childSessionId;
  if (child !== undefined) return void controller.openSession(child, { asChild: true }).catch((error: unknown) => controller.error(error));
  const expanded = new Set(controller.state.expanded);
  if (expanded.has(part.id)) expanded.delete(part.id);
  else expanded.add(part.id);
  controller.update({ expanded });
}

/** The tool call whose row title is on `line` (the latest first). */
function toolAt(controller: Controller, line: string): ToolTurnPart | undefined {
  const text = line.trim();
  const parts = (controller.view?.turns ?? []).flatMap((turn) => turn.parts.filter((part): part is ToolTurnPart => part.type === "tool"));
  for (const part of parts.reverse()) {
    const summary = toolSummary(part);
    const title = `${part.toolId}${summary ? ` ${summary}` : ""}`;
    // `✓ read note.txt 12ms`, `⠋ task …`: the mark, a space, then the title (cut at the screen's edge).
    const rest = text.slice(text.indexOf(" ") + 1);
    const length = Math.min(title.length, rest.length);
    if (length >= part.toolId.length && rest.slice(0, length) === title.slice(0, length)) return part;
  }
  return undefined;
}
