// Starts the TUI on the terminal: a controller over the given client, the first screen
// (opening, a resumed Session, or a new Session), and Ink until the user quits.
import { dirname } from "node:path";
import { render } from "ink";
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

export function createController(options: TuiOptions, preferences = new Preferences()): Controller {
  return new Controller({ backend: new Backend(options.client, options.server, options.where, authorIdentity(dirname(preferences.file))), preferences });
}

/**
 * The first screen: the resumed Session (if any), the catalog, and Connect provider when asked
 * (`--onboarding`) or when no model is usable (no provider has credentials).
 */
export async function startTui(controller: Controller, options: { readonly sessionId?: string | undefined; readonly onboarding?: boolean | undefined }): Promise<void> {
  if (options.sessionId !== undefined) await controller.openSession(options.sessionId);
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
  const terminal = process.stdout.isTTY === true;
  const restorePaste = (): void => {
    if (terminal) process.stdout.write(BRACKETED_PASTE_OFF);
  };
  if (terminal) process.stdout.write(BRACKETED_PASTE_ON);
  // Also when the process ends some other way (process.exit from elsewhere).
  process.once("exit", restorePaste);
  const controller = createController(options);
  options.versionNotices?.route((text) => controller.info(text));
  try {
    await startTui(controller, options);
    // Not Ink's incrementalRendering: in 6.8.0 (the last release for Node 20) it moves the cursor
    // one row short after a frame that ends in a newline, so every frame lands a row lower and
    // leaves the previous one's rows behind (tests/tui/terminal-images.test.ts checks the screen).
    const instance = render(<App controller={controller} />, { exitOnCtrlC: false, patchConsole: false, maxFps: 120 });
    await instance.waitUntilExit();
  } finally {
    controller.close();
    // The shell gets its terminal back as it was, also after a failure.
    restorePaste();
    process.removeListener("exit", restorePaste);
    if (process.stdin.isTTY) process.stdin.setRawMode(false);
  }
  return 0;
}
