// Starts the TUI on the terminal: a controller over the given client, the first screen
// (opening, a resumed Session, or a new Session), and Ink until the user quits.
import { dirname } from "node:path";
import { render, type Instance } from "ink";
import { readSecret, SecretInterrupted } from "../secret-input.js";
import { loadMarkdown } from "./markdown.js";
import { CLEAR_ALL, MOUSE_OFF, MOUSE_ON, osc52, ScreenMirror, type TerminalHooks } from "./terminal.js";
import { authorIdentity } from "./state/author.js";
import type { ZeClient } from "../../clients/index.js";
import { App } from "./app.js";
import { Backend, type Where } from "./state/backend.js";
import { Controller } from "./state/controller.js";
import { hasUsableModel, loadCatalog } from "./state/models.js";
import { providerPicker } from "./state/onboarding.js";
import { Preferences } from "./state/preferences.js";

export interface TuiOptions {
  readonly client: ZeClient;
  readonly server: string;
  readonly where: Where;
  /** Resume this Session instead of the opening screen. */
  readonly sessionId?: string | undefined;
  readonly onboarding?: boolean;
  /** Server-version notices (cli/version-notices.ts): shown on the notice line instead of stderr. */
  readonly versionNotices?: { route(sink: (text: string) => void): void } | undefined;
}

export function createController(options: TuiOptions, preferences = new Preferences(), terminal?: TerminalHooks): Controller {
  return new Controller({ backend: new Backend(options.client, options.server, options.where, authorIdentity(dirname(preferences.file))), preferences, ...(terminal ? { terminal } : {}) });
}

/**
 * The first screen: the resumed Session (if any), the catalog, and Connect provider when asked
 * (`--onboarding`) or when no model is usable (no provider has credentials).
 */
export async function startTui(controller: Controller, options: { readonly sessionId?: string | undefined; readonly onboarding?: boolean | undefined }): Promise<void> {
  // A resumed history is printed as Markdown; the opening screen renders before the renderer loads.
  if (options.sessionId !== undefined) await Promise.all([controller.openSession(options.sessionId), loadMarkdown()]);
  else setImmediate(() => void loadMarkdown().then(() => controller.update({}), (error: unknown) => controller.error(error)));
  if (options.onboarding) controller.openPicker(providerPicker(controller));
  // The catalog is read while the first frame renders; the start does not wait on it.
  void loadCatalog(controller).then(
    (snapshot) => {
      if (controller.sessionId === undefined) controller.watchCatalog();
      if (!options.onboarding && !hasUsableModel(snapshot) && controller.state.overlay === undefined) controller.openPicker(providerPicker(controller));
    },
    (error: unknown) => controller.error(error),
  );
}

/** Bracketed paste on (a paste arrives as one, so a pasted image path attaches the image) and off again. */
const BRACKETED_PASTE_ON = "\u001b[?2004h";
const BRACKETED_PASTE_OFF = "\u001b[?2004l";

/** Runs the TUI until the user quits; resolves with the exit code. */
export async function runTui(options: TuiOptions): Promise<number> {
  // Raw mode first: keys typed while the TUI starts keep their meaning (a cooked terminal
  // would turn Enter into a line feed and hold the line back).
  if (process.stdin.isTTY) process.stdin.setRawMode(true);
  const stdout = process.stdout;
  const terminal = stdout.isTTY === true;
  const preferences = new Preferences();
  let mouse = !preferences.get().mouseOff;
  const modes = (on: boolean): void => {
    if (!terminal) return;
    stdout.write(on ? BRACKETED_PASTE_ON + (mouse ? MOUSE_ON : "") : BRACKETED_PASTE_OFF + MOUSE_OFF);
  };
  const restore = (): void => modes(false);
  modes(true);
  // Also when the process ends some other way (process.exit from elsewhere).
  process.once("exit", restore);
  const mirror = terminal ? new ScreenMirror(stdout) : undefined;
  let instance: Instance | undefined;
  let suspended: (() => Promise<void>) | undefined;
  const hooks: TerminalHooks = {
    clear: () => {
      if (terminal) stdout.write(CLEAR_ALL);
    },
    line: async (row) => (mirror ? (await mirror.flushed(), mirror.line(row)) : ""),
    range: async (from, to) => (mirror ? (await mirror.flushed(), mirror.range(from, to)) : ""),
    osc52: (text) => {
      if (terminal) stdout.write(osc52(text));
    },
    mouse: (on) => {
      mouse = on;
      if (terminal) stdout.write(on ? MOUSE_ON : MOUSE_OFF);
    },
    // Ink stops (unmounts: its input listener and raw mode go), the terminal asks, Ink starts again.
    readSecret: (prompt) =>
      new Promise((resolve, reject) => {
        suspended = async () => {
          modes(false);
          stdout.write(CLEAR_ALL);
          try {
            resolve(await readSecret(prompt, process.stdin, stdout));
          } catch (error) {
            if (error instanceof SecretInterrupted) resolve(undefined);
            else reject(error);
          } finally {
            stdout.write(CLEAR_ALL);
            modes(true);
            process.stdin.setRawMode(true);
          }
        };
        instance?.unmount();
      }),
  };
  const controller = createController(options, preferences, hooks);
  options.versionNotices?.route((text) => controller.info(text));
  // A resize (either way, any number of times, also while a Turn streams): a clean repaint.
  const resized = (): void => controller.repaint();
  stdout.on("resize", resized);
  try {
    await startTui(controller, options);
    for (;;) {
      // Not Ink's incrementalRendering: in 6.8.0 (the last release for Node 20) it moves the cursor
      // one row short after a frame that ends in a newline, so every frame lands a row lower and
      // leaves the previous one's rows behind (tests/tui/terminal-images.test.ts checks the screen).
      instance = render(<App controller={controller} />, { exitOnCtrlC: false, patchConsole: false, maxFps: 120 });
      await instance.waitUntilExit();
      const pending = suspended;
      suspended = undefined;
      if (pending === undefined || controller.state.exited) break;
      await pending();
      // The scrollback is printed again by the new Ink instance.
      controller.update({ epoch: controller.state.epoch + 1 });
    }
  } finally {
    stdout.off("resize", resized);
    controller.close();
    mirror?.close();
    // The shell gets its terminal back as it was, also after a failure.
    restore();
    process.removeListener("exit", restore);
    if (process.stdin.isTTY) process.stdin.setRawMode(false);
  }
  // How to come back, as Claude Code and Codex print it.
  const sessionId = controller.sessionId;
  if (sessionId !== undefined) stdout.write(`\nResume this Session with: ze-harness -s ${sessionId}\n`);
  return 0;
}
