// The Session view's composer: a prompt box that acts on the Session through the same v1
// operations the CLI and the TUI use — `submitPrompt` with `delivery: "queue"` (starts a Turn, or
// queues a follow-up behind the running one), `delivery: "steer"` with the running Turn as
// `expectedTurnId`, and `cancelTurn` — every submit carrying the page's client id
// (`x-ze-harness-client-id: ze-harness-dashboard`). A refusal shows the server's own message
// (`TurnNotActiveError: …`) under the box.
import * as sdk from "../../generated/client/sdk.gen.js";
import type { Turn } from "../../generated/client/types.gen.js";
import { messageOf, newId, type Connection } from "./api.js";
import { h } from "./dom.js";

/** What the composer needs from its Session view. */
export interface ComposerHost {
  readonly connection: Connection;
  readonly sessionId: string;
  /** The Session's running Turn and how many Turns wait behind it, as far as the view knows. */
  active(): { running: Turn | undefined; queued: number };
  /** A Turn this composer submitted or cancelled (the view shows and follows it). */
  learned(turn: Turn): void;
}

export class Composer {
  readonly element: HTMLFormElement;
  private readonly input: HTMLTextAreaElement;
  private readonly send: HTMLButtonElement;
  private readonly steer: HTMLButtonElement;
  private readonly cancel: HTMLButtonElement;
  private readonly state: HTMLElement;
  private readonly note: HTMLElement;
  private busy = false;

  constructor(private readonly host: ComposerHost) {
    this.input = h("textarea", {
      class: "input prompt-input",
      id: "prompt",
      rows: 3,
      placeholder: "Send a prompt to this Session (Ctrl+Enter sends)",
      "aria-label": "Prompt",
      spellcheck: "true",
    });
    this.send = h("button", { type: "submit", class: "button primary", "data-action": "send" }, "Send");
    this.steer = h("button", { type: "button", class: "button steer", "data-action": "steer", title: "Add this to the running Turn before its next model request" }, "Steer");
    this.cancel = h("button", { type: "button", class: "button danger", "data-action": "cancel" }, "Cancel Turn");
    this.state = h("span", { class: "dim composer-state", "data-composer-state": "" });
    this.note = h("p", { class: "composer-note", "data-composer-note": "", role: "status" });
    this.element = h(
      "form",
      { class: "composer", "aria-label": "Act on this Session" },
      this.input,
      h("div", { class: "actions" }, this.send, this.steer, this.cancel, h("span", { class: "spacer" }), this.state),
      this.note,
    );
    this.element.addEventListener("submit", (event) => {
      event.preventDefault(); // form-action 'none': the form never navigates
      void this.queue();
    });
    this.input.addEventListener("input", () => this.refresh());
    this.input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        if (!this.send.disabled) void this.queue();
      }
    });
    this.steer.addEventListener("click", () => void this.steerRunning());
    this.cancel.addEventListener("click", () => void this.cancelRunning());
    this.refresh();
  }

  /** Brings the buttons and the state line in line with the Session's Turns. */
  refresh(): void {
    const { running, queued } = this.host.active();
    const empty = this.input.value.trim() === "";
    this.send.textContent = running || queued > 0 ? "Queue" : "Send";
    this.send.title = running || queued > 0 ? "Run this after the Turns ahead of it" : "Start a Turn";
    this.send.disabled = this.busy || empty;
    this.steer.disabled = this.busy || empty || !running;
    this.cancel.disabled = this.busy || !running;
    const words = [running ? `Turn #${running.sequence} running` : "idle", queued > 0 ? `${queued} queued` : ""].filter(Boolean);
    this.state.textContent = words.join(" · ");
    this.state.dataset["composerState"] = running ? "running" : "idle";
  }

  private async act(doing: string, action: () => Promise<string>): Promise<void> {
    this.busy = true;
    this.refresh();
    this.show(doing, "pending");
    try {
      this.show(await action(), "ok");
    } catch (error) {
      this.show(messageOf(error), "error");
    } finally {
      this.busy = false;
      this.refresh();
    }
  }

  private show(text: string, kind: "pending" | "ok" | "error"): void {
    this.note.textContent = text;
    this.note.dataset["kind"] = kind;
    this.note.setAttribute("role", kind === "error" ? "alert" : "status");
  }

  private async queue(): Promise<void> {
    const text = this.input.value.trim();
    if (text === "") return;
    const { connection: api, sessionId } = this.host;
    const queued = this.host.active().running !== undefined || this.host.active().queued > 0;
    await this.act("Sending…", async () => {
      const turnId = newId();
      await api.call(
        sdk.submitPrompt({
          client: api.client.client,
          path: { server: api.server, sessionId },
          headers: { "x-ze-harness-client-id": api.client.clientId },
          body: { delivery: "queue", turnId, prompt: [{ type: "text", text }] },
        }),
      );
      this.input.value = "";
      const { turn } = await api.call(sdk.getTurn({ client: api.client.client, path: { server: api.server, sessionId, turnId } }));
      this.host.learned(turn);
      return queued ? `Queued as Turn #${turn.sequence}.` : `Started Turn #${turn.sequence}.`;
    });
  }

  private async steerRunning(): Promise<void> {
    const text = this.input.value.trim();
    const running = this.host.active().running;
    if (text === "" || !running) return;
    const { connection: api, sessionId } = this.host;
    await this.act("Steering…", async () => {
      await api.call(
        sdk.submitPrompt({
          client: api.client.client,
          path: { server: api.server, sessionId },
          headers: { "x-ze-harness-client-id": api.client.clientId },
          body: { delivery: "steer", steerId: newId(), expectedTurnId: running.id, prompt: [{ type: "text", text }] },
        }),
      );
      this.input.value = "";
      return `Steer sent to Turn #${running.sequence}; it joins before the next model request.`;
    });
  }

  private async cancelRunning(): Promise<void> {
    const running = this.host.active().running;
    if (!running) return;
    const { connection: api, sessionId } = this.host;
    await this.act("Cancelling…", async () => {
      const { turn } = await api.call(
        sdk.cancelTurn({ client: api.client.client, path: { server: api.server, sessionId, turnId: running.id }, body: { reason: "cancelled from the dashboard" } }),
      );
      this.host.learned(turn);
      return `Cancelled Turn #${running.sequence}.`;
    });
  }
}
