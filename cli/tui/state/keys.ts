// Every key press, in one place and one order: the leader sequence (Ctrl+X, then a key), quit
// keys, the open overlay, an open permission request or question, the suggestion menu, then
// the composer. Esc closes the overlay, cancels a pending paste, hides the suggestion menu,
// cancels the active Turn, or returns to the parent Session from a sub-agent — in that order.
import { isIdPrefix } from "../../short-ids.js";
import type { Key } from "ink";
import { parseCommand } from "../commands.js";
import { PERMISSION_CHOICES } from "../components/permission.js";
import type { Controller, Overlay } from "./controller.js";
import { cancelLogin, providerPicker } from "./onboarding.js";
import { cycleEffort, modelPicker } from "./models.js";
import { bracketedPaste, cancelPaste, pasteClipboard, pasteText, removeLastImage } from "./paste.js";
import { agentPicker, compact, cycleAgent, forkPicker, openFirstSubagent, openSibling, sessionPicker, skillPicker, subagentPicker } from "./slash.js";
import { toggleLatestDetails } from "./details.js";
import { traceKey } from "./trace.js";
import { mouseEvent } from "./mouse.js";

type Action = () => void | Promise<void>;

function run(controller: Controller, action: Action): void {
  try {
    const result = action();
    if (result instanceof Promise) result.catch((error: unknown) => controller.error(error));
  } catch (error) {
    controller.error(error);
  }
}

const needSession = (controller: Controller, what: string): void => {
  if (controller.sessionId === undefined) throw new Error(`${what} needs a Session: send a prompt first`);
};

function leader(controller: Controller, input: string, key: Key): void {
  controller.update({ leader: false });
  if (key.downArrow) return run(controller, () => openFirstSubagent(controller));
  // Shift+J / Shift+L arrive as capitals.
  if (input === "J") return traceKey(controller, "previous");
  if (input === "L") return traceKey(controller, "fold");
  switch (input.toLowerCase()) {
    case "m":
      return controller.openPicker(modelPicker(controller));
    case "a":
      return run(controller, () => (needSession(controller, "The agent picker"), controller.openPicker(agentPicker(controller))));
    case "k":
      return controller.openPicker(skillPicker(controller));
    case "e":
      return run(controller, () => cycleEffort(controller));
    case "s":
      return controller.openPicker(sessionPicker(controller));
    case "n":
      return run(controller, () => controller.newSession());
    case "o":
      return controller.update({ overlay: { kind: "open", text: "" } });
    case "f":
      return run(controller, () => (needSession(controller, "The fork picker"), controller.openPicker(forkPicker(controller))));
    case "g":
      return run(controller, () => (needSession(controller, "The sub-agent list"), controller.openPicker(subagentPicker(controller))));
    case "c":
      return run(controller, () => compact(controller));
    case "t":
      return toggleLatestDetails(controller);
    case "p":
      return controller.openPicker(providerPicker(controller));
    case "q":
      return controller.quit();
    case "v":
      return controller.state.overlay === undefined ? pasteClipboard(controller) : undefined;
    case "r":
      return removeLastImage(controller);
    case "j":
      return traceKey(controller, "next");
    case "d":
      return traceKey(controller, "details");
    case "l":
      return traceKey(controller, "reveal");
    default:
      return;
  }
}

function picker(controller: Controller, overlay: Extract<Overlay, { kind: "picker" }>, input: string, key: Key): void {
  const items = controller.visibleItems(overlay);
  const item = items[overlay.selected];
  if (key.escape) {
    controller.closeOverlay();
    overlay.spec.multi?.done();
    return;
  }
  if (key.upArrow || (key.ctrl && input === "p")) return controller.update({ overlay: { ...overlay, selected: Math.max(0, overlay.selected - 1) } });
  if (key.downArrow || (key.ctrl && input === "n")) return controller.update({ overlay: { ...overlay, selected: Math.min(items.length - 1, overlay.selected + 1) } });
  if (key.ctrl && input === "r") {
    controller.update({ overlay: { ...overlay, loading: true } });
    return void controller.loadPicker(overlay.spec);
  }
  if (key.tab) return item && overlay.spec.tab ? overlay.spec.tab(item) : undefined;
  if (key.return || (input === " " && overlay.spec.multi)) {
    if (!item) return;
    if (overlay.spec.multi) return overlay.spec.multi.toggle(item);
    return run(controller, () => overlay.spec.choose(item));
  }
  if (key.backspace || key.delete) return controller.update({ overlay: { ...overlay, query: overlay.query.slice(0, -1), selected: 0 } });
  if (printable(input, key)) controller.update({ overlay: { ...overlay, query: overlay.query + input, selected: 0 } });
}

function openById(controller: Controller, overlay: Extract<Overlay, { kind: "open" }>, input: string, key: Key): void {
  if (key.escape) return controller.closeOverlay();
  if (key.return) {
    const id = overlay.text.trim().toLowerCase();
    return run(controller, async () => {
      // A full id, or a unique prefix of 8 or more hex digits (as `ze-harness -s` takes).
      const full = isIdPrefix(id) ? await controller.backend.sessionByPrefix(id) : id;
      if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(full)) throw new Error(`${JSON.stringify(overlay.text.trim())} is not a Session id (a UUID, or a unique prefix of 8 or more hex digits)`);
      controller.closeOverlay();
      await controller.openSession(full);
    });
  }
  if (key.backspace || key.delete) return controller.update({ overlay: { ...overlay, text: overlay.text.slice(0, -1) } });
  if (printable(input, key)) controller.update({ overlay: { ...overlay, text: overlay.text + input } });
}

const printable = (input: string, key: Key): boolean => input !== "" && !key.ctrl && !(key.meta && input.length === 1) && !/[\u0000-\u0008\u000b-\u001f\u007f]/.test(input);

/** Answers the open permission request or question; true when the key was theirs. */
function interaction(controller: Controller, input: string, key: Key): boolean {
  const pending = controller.pending();
  const sessionId = controller.sessionId;
  if (!pending || sessionId === undefined) return false;
  if (pending.kind === "approval" && pending.permission) {
    const request = pending.permission;
    const choice = controller.state.permissionChoice;
    const reply = (index: number): void => {
      controller.update({ permissionChoice: 0 });
      run(controller, () => controller.backend.replyPermission(request.sessionId, request.id, PERMISSION_CHOICES[index]!.reply));
    };
    if (key.escape) reply(2);
    else if (key.return) reply(choice);
    else if (key.leftArrow || (key.shift && key.tab)) controller.update({ permissionChoice: (choice + 2) % 3 });
    else if (key.rightArrow || key.tab) controller.update({ permissionChoice: (choice + 1) % 3 });
    return true;
  }
  const request = pending.question;
  const state = controller.state.question;
  if (!request || !state || state.requestId !== request.id) return false;
  const question = request.questions[state.index]!;
  if (key.escape) {
    run(controller, () => controller.backend.rejectQuestion(request.sessionId, request.id));
    return true;
  }
  if (key.upArrow) return (controller.update({ question: { ...state, selected: Math.max(0, state.selected - 1) } }), true);
  if (key.downArrow) return (controller.update({ question: { ...state, selected: Math.min(question.options.length - 1, state.selected + 1) } }), true);
  if (key.return) {
    const typed = controller.state.draft.trim();
    const answer = typed !== "" && question.custom !== false ? [typed] : question.options[state.selected] ? [question.options[state.selected]!.label] : [];
    if (answer.length === 0) return true;
    const answers = [...state.answers, answer];
    controller.update({ draft: "" });
    if (answers.length < request.questions.length) controller.update({ question: { ...state, index: state.index + 1, selected: 0, answers } });
    else run(controller, () => controller.backend.replyQuestion(request.sessionId, request.id, answers));
    return true;
  }
  return false; // typing goes to the composer (a custom answer)
}

/** Enter with Shift or Alt as xterm's modifyOtherKeys sends it (`ESC [27;MOD;13~`; Ink strips the ESC). */
const MODIFIED_ENTER = /^\[27;(\d+);13~$/;

export function handleKey(controller: Controller, input: string, key: Key): void {
  if (mouseEvent(controller, input)) return;
  // A bracketed paste arrives whole, then counts as one paste (a path attaches its image).
  const pasted = (text: string, plain: Key): void => {
    const state = controller.state;
    if (state.overlay !== undefined || state.leader) return handleKey(controller, text.replace(/[\r\n]+/g, " ").trim(), plain);
    pasteText(controller, text);
  };
  if (bracketedPaste(controller, input, key, pasted)) return;
  // Shift+Enter: CSI-u (`ESC [13;2u`) reaches us as Enter with shift; modifyOtherKeys as text.
  const modified = MODIFIED_ENTER.exec(input);
  if (modified) {
    const bits = Number(modified[1]) - 1;
    return handleKey(controller, "\r", { ...key, return: true, shift: (bits & 1) !== 0, meta: (bits & 2) !== 0, ctrl: (bits & 4) !== 0 });
  }
  // Text and Enter that arrive in one chunk (fast typing, a test's write): the text, then Enter.
  if (input.length > 1 && input.endsWith("\r") && !key.ctrl && !key.meta) {
    handleKey(controller, input.slice(0, -1), { ...key, return: false });
    return handleKey(controller, "\r", { ...key, return: true });
  }
  // Ctrl+Alt+letter arrives as ESC + the control character, which Ink passes on raw.
  const code = input.length === 1 ? input.charCodeAt(0) : 0;
  if (code >= 1 && code <= 26 && !key.ctrl && code !== 8 && code !== 9 && code !== 10 && code !== 13) {
    return handleKey(controller, String.fromCharCode(code + 96), { ...key, ctrl: true, meta: true });
  }
  // Several backspaces in one chunk (a held key, a test's write).
  if (input.length > 1 && /^[\u007f\b]+$/.test(input)) {
    for (let count = 0; count < input.length; count++) handleKey(controller, "", { ...key, backspace: true });
    return;
  }
  // Ctrl+X and its second key in one chunk (a fast typist, a test's write).
  if (input.length > 1 && input.startsWith("\u0018")) {
    handleKey(controller, "x", { ...key, ctrl: true });
    return handleKey(controller, input.slice(1), { ...key, ctrl: false });
  }
  // Another control key and what follows in one chunk (Ctrl+L then typing): one at a time.
  if (input.length > 1 && /^[\u0001-\u0007\u000b\u000c\u000e-\u001a]/.test(input)) {
    handleKey(controller, input[0]!, { ...key, ctrl: false });
    return handleKey(controller, input.slice(1), { ...key, ctrl: false });
  }
  const state = controller.state;
  if (state.exited) return;
  if (state.leader) return leader(controller, input, key);
  if (key.ctrl && input === "x") return controller.update({ leader: true });
  if (key.ctrl && (input === "c" || input === "d")) return controller.quit();
  // Ctrl+L repaints the screen (also with an overlay open).
  if (key.ctrl && input === "l") return controller.repaint();
  if (key.ctrl && key.meta && input === "p") return leader(controller, "p", key);
  // Ctrl+Alt+O hides (or shows again) the first-run tips on future launches; Ctrl+Alt+K pins the shortcut panel.
  if (key.ctrl && key.meta && input === "o") return controller.toggleTips();
  if (key.ctrl && key.meta && input === "k") return controller.update({ shortcutsPinned: !state.shortcutsPinned });
  if (key.ctrl && input === "o" && state.screen === "opening") return controller.update({ overlay: { kind: "open", text: "" } });
  const overlay = state.overlay;
  if (overlay?.kind === "picker") return picker(controller, overlay, input, key);
  if (overlay?.kind === "open") return openById(controller, overlay, input, key);
  if (overlay?.kind === "login") return key.escape ? run(controller, () => cancelLogin(controller, overlay.providerId, overlay.loginId)) : undefined;
  // Esc cancels a pending paste before its other meanings.
  if (key.escape && state.pasting) return cancelPaste(controller);
  // The Execute trace is a panel: Esc closes it before the Turn-level meanings.
  if (key.escape && state.trace !== undefined) return controller.update({ trace: undefined });
  if (interaction(controller, input, key)) return;

  const menu = controller.suggestionList();
  if (menu.length > 0) {
    const selected = Math.min(state.suggestionIndex, menu.length - 1);
    if (key.escape) return controller.update({ suggestionsHidden: true });
    if (key.upArrow || (key.ctrl && input === "p")) return controller.update({ suggestionIndex: Math.max(0, selected - 1) });
    if (key.downArrow || (key.ctrl && input === "n")) return controller.update({ suggestionIndex: Math.min(menu.length - 1, selected + 1) });
    if (key.tab) return controller.update({ draft: `/${menu[selected]!.name}${menu[selected]!.args ? " " : ""}`, suggestionIndex: 0 });
    if (key.return && !key.meta && !key.shift) {
      // A command typed out in full (`/q`, `/exit`) runs as typed.
      if (parseCommand(state.draft) !== undefined) return void controller.submit(state.draft);
      const command = menu[selected]!;
      if (command.args.startsWith("[") || command.args === "") return void controller.submit(`/${command.name}`);
      return controller.update({ draft: `/${command.name} `, suggestionIndex: 0 });
    }
  }
  if (key.escape) {
    return run(controller, async () => {
      if (await controller.cancelRunning()) return;
      await controller.back();
    });
  }
  if (key.meta && key.upArrow) return run(controller, () => controller.back().then(() => undefined));
  if (key.meta && (key.leftArrow || key.rightArrow)) return run(controller, () => openSibling(controller, key.leftArrow ? -1 : 1));
  if (key.ctrl && input === "b") {
    return run(controller, async () => {
      if (controller.sessionId === undefined) return;
      const promoted = await controller.backend.background(controller.sessionId);
      controller.info(promoted ? "foreground sub-agents detached to the background" : "no foreground sub-agent to detach");
    });
  }
  if (key.tab) return cycleAgent(controller, key.shift ? -1 : 1);
  if (key.ctrl && input === "v") return pasteClipboard(controller);
  // Newline: Ctrl+J (a line feed), Alt+Enter, Shift+Enter where the terminal reports it.
  if (input === "\n" || (key.return && (key.meta || key.shift))) return controller.update({ draft: `${state.draft}\n` });
  if (key.return) return void controller.submit(state.draft);
  if (key.backspace || key.delete) return controller.update({ draft: state.draft.slice(0, -1), suggestionsHidden: false });
  // A chunk of several characters is a paste (or fast typing): one image file's path attaches it.
  if (printable(input, key)) {
    if (input.length > 1) return pasteText(controller, input);
    controller.update({ draft: state.draft + input, suggestionsHidden: false, suggestionIndex: 0 });
  }
}
