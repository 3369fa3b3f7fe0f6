// Component tests of the TUI: the real App (Ink, rendered by ink-testing-library) over a real
// in-process harness whose provider is the scripted test model. Keys are the bytes a terminal
// sends; waits are on rendered frames, never on time.
import { createElement } from "react";
import { render } from "ink-testing-library";
import { afterEach, beforeEach } from "vitest";
import type { ZeClient } from "../../clients/index.js";
import { App } from "../../cli/tui/app.js";
import { createController, startTui } from "../../cli/tui/run.js";
import type { Controller } from "../../cli/tui/state/controller.js";
import { Preferences } from "../../cli/tui/state/preferences.js";
import type { TerminalHooks } from "../../cli/tui/terminal.js";
import { directiveTurn } from "../../tools/test-model/index.js";
import { startModelHarness, type ModelHarness, type ModelHarnessOptions } from "../support/model.js";

export const KEY = {
  enter: "\r",
  escape: "\u001b",
  up: "\u001b[A",
  down: "\u001b[B",
  right: "\u001b[C",
  left: "\u001b[D",
  tab: "\t",
  ctrlX: "\u0018",
  ctrlC: "\u0003",
  ctrlJ: "\n",
  ctrlR: "\u0012",
  backspace: "\u007f",
} as const;

export interface Tui {
  readonly controller: Controller;
  /** The latest frame (static output and the live region). */
  frame(): string;
  /** Every frame so far. */
  frames(): readonly string[];
  /** Sends keys, one write per argument (each is one key press or one paste). */
  press(...keys: string[]): Promise<void>;
  /** Types text and presses Enter. */
  submit(text: string): Promise<void>;
  /** Resolves once a frame matches `pattern` (rejects after `ms` of waiting with the last frame). */
  waitFor(pattern: RegExp, ms?: number): Promise<string>;
  /** Resolves once `condition` holds for the controller's state (checked on every change). */
  until(condition: () => boolean): Promise<void>;
  unmount(): void;
}

export interface TuiOptions {
  readonly sessionId?: string;
  readonly directory?: string | undefined;
  /** No client directory at all (`--no-workdir`). */
  readonly noDirectory?: boolean;
  /** `--onboarding`: Connect provider opens at start. */
  readonly onboarding?: boolean;
  /** Another client of the harness (e.g. over a fetch that cuts streams) instead of `h.api`. */
  readonly client?: ZeClient;
  /** A stand-in for the real terminal (run.tsx gives the TUI one; component tests have none). */
  readonly terminal?: TerminalHooks;
}

export async function renderTui(h: ModelHarness, options: TuiOptions = {}): Promise<Tui> {
  const controller = createController(
    { client: options.client ?? h.api, server: "local", where: { directory: options.noDirectory ? undefined : (options.directory ?? h.home.root), local: true } },
    new Preferences(`${h.home.env["XDG_DATA_HOME"]}/ze-harness`),
    options.terminal,
  );
  // The same start as `ze-harness tui`: the resumed Session, the catalog, onboarding.
  await startTui(controller, { sessionId: options.sessionId, onboarding: options.onboarding });
  const instance = render(createElement(App, { controller }));
  const waiters = new Set<() => void>();
  const write = instance.stdout.write;
  instance.stdout.write = (frame: string) => {
    write(frame);
    for (const waiter of [...waiters]) waiter();
  };
  const frame = (): string => instance.lastFrame() ?? "";
  const press = async (...keys: string[]): Promise<void> => {
    for (const key of keys) {
      instance.stdin.write(key);
      // Ink handles input in a microtask; let it (and the render it schedules) run.
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  return {
    controller,
    frame,
    frames: () => instance.frames,
    press,
    submit: async (text) => press(text, KEY.enter),
    waitFor: (pattern, ms = 15_000) =>
      new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no frame matched ${pattern} in ${ms} ms; the last frame:\n${frame()}`));
        }, ms);
        const check = (): void => {
          const current = frame();
          if (pattern.test(current)) {
            clearTimeout(timer);
            waiters.delete(check);
            resolve(current);
          }
        };
        waiters.add(check);
        check();
      }),
    until: (condition) =>
      new Promise<void>((resolve) => {
        if (condition()) return resolve();
        const stop = controller.subscribe(() => {
          if (condition()) {
            stop();
            resolve();
          }
        });
      }),
    unmount: () => {
      controller.close();
      instance.unmount();
    },
  };
}

/** A model harness (directives on: prompts script the model) per test, and the rendered TUIs closed after it. */
export function tuiPerTest(options: ModelHarnessOptions = {}): { harness: () => ModelHarness; open: (tuiOptions?: TuiOptions) => Promise<Tui> } {
  let current: ModelHarness | undefined;
  const opened: Tui[] = [];
  beforeEach(async () => {
    current = await startModelHarness(options);
    // Unscripted requests are answered from the prompt's directives (@say, @call, @then).
    current.model.reply((request) => {
      const turn = directiveTurn(request);
      if (typeof turn === "string") throw new Error(turn);
      return turn;
    });
  });
  afterEach(async () => {
    for (const tui of opened.splice(0)) tui.unmount();
    await current?.close();
    current = undefined;
  });
  const harness = (): ModelHarness => {
    if (!current) throw new Error("tuiPerTest: no harness outside a test");
    return current;
  };
  return {
    harness,
    open: async (tuiOptions) => {
      const tui = await renderTui(harness(), tuiOptions);
      opened.push(tui);
      return tui;
    },
  };
}
