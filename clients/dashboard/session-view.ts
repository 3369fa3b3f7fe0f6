// The Session view: the Session's recent Turns with their parts (text, reasoning, refusals, tool
// calls, steering), each unfinished Turn followed live with `watchTurn`, and its pending
// permission requests and questions answerable here (replyPermission / replyQuestion /
// rejectQuestion), and a composer (composer.ts) that sends, queues, steers and cancels. Turns the
// server stream announces while the view is open join it. The view is a route of its own
// (`#/sessions/<id>`, router.ts); its back link returns to the grid.
import * as sdk from "../../generated/client/sdk.gen.js";
import type { PromptPart, Question, Session, ToolTurnPart, Turn, TurnPart } from "../../generated/client/types.gen.js";
import { watchTurn, type ServerWatchEvent } from "../watch.js";
import { messageOf, type Connection } from "./api.js";
import { Composer } from "./composer.js";
import { h, preview, replaceChildren, time } from "./dom.js";
import { SESSIONS_HREF } from "./router.js";
import { isTerminal } from "./sessions.js";

/** How many of the newest Turns the view opens with. */
const RECENT_TURNS = 20;

const promptText = (prompt: readonly PromptPart[]): string =>
  prompt.map((part) => (part.type === "text" ? part.text : part.type === "image" ? "[image]" : "[content]")).join("\n");

/** A tool call's result as display text or data: the canonical result, else the raw output. */
function resultOf(part: ToolTurnPart): unknown {
  const result = part.canonicalResult;
  if (!result) return part.output;
  if (result.format !== "content") return result.value;
  return result.value.map((item) => (item.type === "text" ? item.text : `[${item.type}]`)).join("\n");
}

export class SessionView {
  private sessionId: string | undefined;
  private controller = new AbortController();
  private readonly turns = new Map<string, { turn: Turn; element: HTMLElement }>();
  private readonly watching = new Set<string>();
  /** Open answer forms by request id, kept across re-renders so a half-filled form survives. */
  private readonly forms = new Map<string, HTMLElement>();
  private list: HTMLElement | undefined;
  private composer: Composer | undefined;
  private title: HTMLElement | undefined;
  /** Reports a Turn this view learned about (the grid keeps its status). */
  onTurn: (turn: Turn) => void = () => {};

  constructor(
    private readonly container: HTMLElement,
    private readonly connection: Connection,
  ) {}

  get openSessionId(): string | undefined {
    return this.sessionId;
  }

  close(): void {
    this.controller.abort();
    this.sessionId = undefined;
    this.turns.clear();
    this.watching.clear();
    this.forms.clear();
    this.list = undefined;
    this.composer = undefined;
    this.title = undefined;
    this.container.hidden = true;
    replaceChildren(this.container);
    document.title = "Ze Harness";
  }

  async open(sessionId: string): Promise<void> {
    this.close();
    this.controller = new AbortController();
    this.sessionId = sessionId;
    this.container.hidden = false;
    replaceChildren(this.container, this.backLink(), h("p", { class: "dim" }, "Loading…"));
    const signal = this.controller.signal;
    const api = this.connection;
    const path = { server: api.server, sessionId };
    try {
      const { session } = await api.call(sdk.getSession({ client: api.client.client, path }));
      const afterSequence = Math.max(0, session.nextSequence - 1 - RECENT_TURNS);
      const page = await api.call(
        sdk.listSessionTurns({ client: api.client.client, path, query: { afterSequence: String(afterSequence), limit: String(RECENT_TURNS) } }),
      );
      if (signal.aborted) return;
      this.renderFrame(session);
      for (const { turn } of page.turns) this.show(turn);
    } catch (error) {
      if (signal.aborted) return;
      replaceChildren(this.container, this.backLink(), h("p", { class: "banner error", role: "alert" }, `Cannot open the Session: ${messageOf(error)}`));
    }
  }

  /** Server stream events: a Turn of the open Session this view does not hold yet is read and followed. */
  onServerEvent(event: ServerWatchEvent): void {
    if (this.sessionId === undefined || !("sessionId" in event) || event.sessionId !== this.sessionId) return;
    if (event.type === "session.title" && this.title) {
      this.title.textContent = event.title || "Untitled Session";
      document.title = `${this.title.textContent} — Ze Harness`;
    }
    if (event.type === "session.deleted") {
      this.container.append(h("p", { class: "banner error", role: "alert" }, "This Session was deleted."));
      this.composer?.element.remove();
      this.composer = undefined;
    }
    if (!("turnId" in event)) return;
    if (event.type === "session.turn.snapshot") {
      if (!this.watching.has(event.turnId)) this.show(event.turn);
      return;
    }
    if (this.turns.has(event.turnId)) return;
    const sessionId = this.sessionId;
    const api = this.connection;
    void api
      .call(sdk.getTurn({ client: api.client.client, path: { server: api.server, sessionId, turnId: event.turnId } }))
      .then(({ turn }) => {
        if (this.sessionId === sessionId) this.show(turn);
      })
      .catch(() => undefined);
  }

  private backLink(): HTMLElement {
    return h("a", { href: SESSIONS_HREF, class: "chip back", "data-action": "back" }, "← All Sessions");
  }

  private renderFrame(session: Session): void {
    const sessionId = session.id;
    this.list = h("div", { class: "turns" });
    this.title = h("h2", {}, session.title ?? "Untitled Session");
    document.title = `${this.title.textContent} — Ze Harness`;
    this.composer = new Composer({
      connection: this.connection,
      sessionId,
      active: () => this.active(),
      learned: (turn) => {
        if (this.sessionId === sessionId) this.show(turn);
      },
    });
    replaceChildren(
      this.container,
      h(
        "header",
        { class: "view-header" },
        this.backLink(),
        h("div", { class: "view-title" }, this.title, h("div", { class: "dim mono" }, session.id, " · workdir ", session.workdir)),
      ),
      this.list,
      this.composer.element,
    );
  }

  /** The running Turn and the queued ones among the Turns this view holds. */
  private active(): { running: Turn | undefined; queued: number } {
    let running: Turn | undefined;
    let queued = 0;
    for (const { turn } of this.turns.values()) {
      if (turn.phase === "running") running = turn;
      else if (turn.phase === "pending") queued += 1;
    }
    return { running, queued };
  }

  /** Shows (or refreshes) a Turn and follows it while it is unfinished. */
  private show(turn: Turn): void {
    if (!this.list) return;
    const held = this.turns.get(turn.id);
    if (held && held.turn.revision > turn.revision) return;
    const element = held?.element ?? h("article", { class: "turn", "data-turn-id": turn.id });
    if (!held) {
      // Turns in sequence order.
      const after = [...this.turns.values()].find((other) => other.turn.sequence > turn.sequence);
      this.list.insertBefore(element, after?.element ?? null);
    }
    this.turns.set(turn.id, { turn, element });
    this.renderTurn(turn, element);
    this.onTurn(turn);
    this.composer?.refresh();
    if (!isTerminal(turn.phase)) this.follow(turn);
  }

  private follow(turn: Turn): void {
    if (this.watching.has(turn.id) || this.sessionId === undefined) return;
    this.watching.add(turn.id);
    const signal = this.controller.signal;
    const api = this.connection;
    watchTurn(api.client, {
      server: api.server,
      sessionId: turn.sessionId,
      turnId: turn.id,
      signal,
      onEvent: (_event, current) => this.update(current),
    })
      .then((final) => this.update(final))
      .catch((error: unknown) => {
        if (signal.aborted) return;
        const entry = this.turns.get(turn.id);
        entry?.element.append(h("p", { class: "banner error" }, `Live updates stopped: ${messageOf(error)}`));
      })
      .finally(() => this.watching.delete(turn.id));
  }

  private update(turn: Turn): void {
    const entry = this.turns.get(turn.id);
    if (!entry) return;
    entry.turn = structuredClone(turn);
    this.renderTurn(entry.turn, entry.element);
    this.onTurn(entry.turn);
    this.composer?.refresh();
  }

  private renderTurn(turn: Turn, element: HTMLElement): void {
    element.dataset["phase"] = turn.phase;
    replaceChildren(
      element,
      h(
        "header",
        { class: "turn-header" },
        h("span", { class: "mono dim" }, `#${turn.sequence}`),
        h("span", { class: `pill phase-${turn.phase}`, "data-phase": turn.phase }, turn.phase),
        h("span", { class: "dim" }, turn.model),
        h("span", { class: "dim" }, time(turn.startedAt ?? turn.acceptedAt)),
      ),
      h("div", { class: "prompt" }, promptText(turn.request.prompt)),
      ...turn.parts.map((part) => this.renderPart(turn, part)),
      this.renderOutcome(turn),
    );
  }

  private renderOutcome(turn: Turn): HTMLElement | undefined {
    const outcome = turn.outcome;
    if (!outcome) return undefined;
    const detail =
      outcome.kind === "failed" ? `${outcome.fault.code}: ${outcome.fault.message}`
      : outcome.kind === "cancelled" ? (outcome.reason ?? "")
      : outcome.kind === "limit_reached" ? outcome.limit.name
      : "";
    return h("div", { class: `outcome outcome-${outcome.kind}`, "data-outcome": outcome.kind }, outcome.kind, detail ? ` — ${detail}` : "");
  }

  private renderPart(turn: Turn, part: TurnPart): HTMLElement {
    switch (part.type) {
      case "text":
        return h("div", { class: "part text", "data-part-id": part.id }, part.text);
      case "reasoning":
        return h("div", { class: "part reasoning", "data-part-id": part.id }, part.text);
      case "refusal":
        return h("div", { class: "part refusal", "data-part-id": part.id }, part.text);
      case "steering":
        return h("div", { class: "part steering", "data-part-id": part.id }, "Steered: ", part.steers.map((steer) => promptText(steer.prompt)).join("\n"));
      case "tool":
        return this.renderTool(turn, part);
    }
  }

  private renderTool(turn: Turn, part: ToolTurnPart): HTMLElement {
    const approval = part.approval;
    const result = resultOf(part);
    return h(
      "div",
      { class: "part tool", "data-tool-call-id": part.toolCallId, "data-tool-state": part.state },
      h("div", { class: "tool-header" }, h("span", { class: "mono" }, part.toolId), h("span", { class: `pill tool-${part.state}` }, part.state)),
      h("pre", { class: "tool-input" }, preview(part.input)),
      // The live preview while it runs; once there is a result, the result alone.
      part.activity?.preview && result === undefined ? h("pre", { class: "tool-activity" }, part.activity.preview) : undefined,
      result !== undefined ? h("pre", { class: "tool-output" }, preview(result)) : undefined,
      part.fault ? h("div", { class: "banner error" }, `${part.fault.code}: ${part.fault.message}`) : undefined,
      approval.state === "pending" ? this.approvalForm(turn, approval.request.id, approval.request.action, approval.request.resources) : undefined,
      approval.state === "resolved"
        ? h("div", { class: "dim", "data-approval": approval.decision }, `${approval.decision === "allow" ? "Allowed" : "Denied"} (${approval.reply ?? approval.source})`)
        : undefined,
      part.question?.state === "pending" ? this.questionForm(turn, part.question.request.id, part.question.request.questions) : undefined,
      part.question?.state === "answered" ? h("div", { class: "dim" }, `Answered: ${part.question.answers.map((answer) => answer.join(", ")).join(" / ")}`) : undefined,
      part.question?.state === "dismissed" ? h("div", { class: "dim" }, "Question dismissed") : undefined,
    );
  }

  private approvalForm(turn: Turn, requestId: string, action: string, resources: readonly string[]): HTMLElement {
    const kept = this.forms.get(requestId);
    if (kept) return kept;
    const status = h("span", { class: "dim" });
    const message = h("input", { type: "text", class: "input", placeholder: "Message for the model (optional)", "aria-label": "Message" });
    const reply = (choice: "once" | "always" | "reject") => async () => {
      const api = this.connection;
      const text = message.value.trim();
      for (const button of form.querySelectorAll("button")) button.disabled = true;
      status.textContent = "Sending…";
      try {
        await api.call(
          sdk.replyPermission({
            client: api.client.client,
            path: { server: api.server, sessionId: turn.sessionId, permissionRequestId: requestId },
            body: { reply: choice, ...(text ? { message: text } : {}) },
          }),
        );
        status.textContent = "Sent";
      } catch (error) {
        status.textContent = messageOf(error);
        for (const button of form.querySelectorAll("button")) button.disabled = false;
      }
    };
    const form = h(
      "div",
      { class: "approval", role: "group", "aria-label": "Permission request", "data-permission-request-id": requestId },
      h("div", {}, h("strong", {}, "Allow "), h("span", { class: "mono" }, action), " ", h("span", { class: "mono dim" }, resources.join(", ")), "?"),
      message,
      h(
        "div",
        { class: "actions" },
        h("button", { type: "button", class: "button primary", "data-reply": "once", onclick: reply("once") }, "Allow once"),
        h("button", { type: "button", class: "button", "data-reply": "always", onclick: reply("always") }, "Always"),
        h("button", { type: "button", class: "button danger", "data-reply": "reject", onclick: reply("reject") }, "Reject"),
        status,
      ),
    );
    this.forms.set(requestId, form);
    return form;
  }

  private questionForm(turn: Turn, requestId: string, questions: readonly Question[]): HTMLElement {
    const kept = this.forms.get(requestId);
    if (kept) return kept;
    const status = h("span", { class: "dim" });
    const api = this.connection;
    const path = { server: api.server, sessionId: turn.sessionId, questionRequestId: requestId };
    const fieldsets = questions.map((question, index) =>
      h(
        "fieldset",
        { class: "question", "data-question-index": index },
        h("legend", {}, question.header),
        h("p", {}, question.question),
        ...question.options.map((option) =>
          h(
            "label",
            { class: "option" },
            h("input", { type: question.multiple ? "checkbox" : "radio", name: `${requestId}-${index}`, value: option.label }),
            " ",
            option.label,
            option.description ? h("span", { class: "dim" }, ` — ${option.description}`) : undefined,
          ),
        ),
      ),
    );
    const send = async (dismiss: boolean): Promise<void> => {
      for (const button of form.querySelectorAll("button")) button.disabled = true;
      status.textContent = "Sending…";
      try {
        if (dismiss) await api.call(sdk.rejectQuestion({ client: api.client.client, path }));
        else {
          const answers = fieldsets.map((fieldset) => [...fieldset.querySelectorAll<HTMLInputElement>("input:checked")].map((input) => input.value));
          await api.call(sdk.replyQuestion({ client: api.client.client, path, body: { answers } }));
        }
        status.textContent = "Sent";
      } catch (error) {
        status.textContent = messageOf(error);
        for (const button of form.querySelectorAll("button")) button.disabled = false;
      }
    };
    const form = h(
      "div",
      { class: "approval", role: "group", "aria-label": "Question", "data-question-request-id": requestId },
      ...fieldsets,
      h(
        "div",
        { class: "actions" },
        h("button", { type: "button", class: "button primary", "data-answer": "reply", onclick: () => void send(false) }, "Reply"),
        h("button", { type: "button", class: "button", "data-answer": "dismiss", onclick: () => void send(true) }, "Dismiss"),
        status,
      ),
    );
    this.forms.set(requestId, form);
    return form;
  }
}
