// Longer than ~400 lines on purpose: every key press is one dispatch over one snapshot (screen,
// draft, overlays, leader key, the next Turn's choices), and splitting the handlers from the state
// they change would pass that snapshot around instead of keeping its transitions in one place.
// The TUI's state outside React: the screen, the draft, overlays, the leader key, the next
// Turn's model/agent/effort/Skills, the Session being viewed (and its parents while viewing
// a sub-agent), and every key press. Components only render its snapshot; tests drive it
// through the same keys a terminal sends. Pickers live in slash.ts, models.ts and onboarding.ts,
// keys in keys.ts, the state shapes in ui-state.ts.
// Over 400 lines: the Session switch, the feed's render pacing, prompts/steering and the local
// state they settle (queued follow-ups, a cancel's notice) share private fields and one order.
import { randomUUID } from "node:crypto";
import type { CatalogSnapshot, Turn } from "../../../clients/index.js";
import { parseCommand, suggestions, type SlashCommand } from "../commands.js";
import type { PickerItem } from "../components/picker.js";
import { SPINNER } from "../format.js";
import type { Backend } from "./backend.js";
import { SessionFeed, type FeedOptions, type FeedView } from "./feed.js";
import type { Preferences } from "./preferences.js";
import { runSlashCommand } from "./slash.js";
import { loadCatalog, nextEffort, watchCatalog } from "./models.js";
import { DescendantRequests } from "./descendants.js";
import { ChildSummaries } from "./children.js";
import type { Overlay, Pending, PickerSpec, Printed, UiState } from "./ui-state.js";
import { promptParts, type Attachment } from "./images.js";
import type { TerminalHooks } from "../terminal.js";

export type { NextTurnChoice, Overlay, Pending, PickerSpec, Printed, UiState } from "./ui-state.js";

const CANCELLING = "cancelling the running Turn";

/** The shortest time between two renders caused by the Session feed (about 30 per second). */
const FEED_FRAME_MS = 33;

export interface ControllerOptions {
  readonly backend: Backend;
  readonly preferences: Preferences;
  readonly feedOptions?: FeedOptions;
  /** The real terminal (run.tsx); absent in component tests. */
  readonly terminal?: TerminalHooks;
}

const initial: UiState = {
  screen: "opening",
  draft: "",
  attachments: [],
  pasting: false,
  suggestionIndex: 0,
  suggestionsHidden: false,
  leader: false,
  shortcutsPinned: false,
  tipsHidden: false,
  overlay: undefined,
  notice: undefined,
  expanded: new Set(),
  trace: undefined,
  permissionChoice: 0,
  question: undefined,
  next: { skills: [] },
  parents: [],
  frame: 0,
  exited: false,
  agents: [],
  printed: [],
  defaultAgent: undefined,
  epoch: 0,
  mouse: true,
  steers: [],
  cancelling: undefined,
  version: 0,
};

export class Controller {
  state: UiState = initial;
  feed: SessionFeed | undefined;
  private descendants: DescendantRequests | undefined;
  /** Summaries of the sub-agents behind the viewed Session's task rows. */
  children: ChildSummaries | undefined;
  /** The last model catalog read (pickers, effort levels, the header's default). */
  catalog: CatalogSnapshot | undefined;
  private unsubscribeFeed: (() => void) | undefined;
  private feedTimer: ReturnType<typeof setTimeout> | undefined;
  private stopCatalogWatch: (() => void) | undefined;
  private lastFeed = 0;
  /** The clipboard read in flight (paste.ts); Esc aborts it. */
  pasteAbort: AbortController | undefined;
  /** Text of a bracketed paste until its end marker (paste.ts). */
  pasteBuffer: string | undefined;
  /** The spinner ticked; its frame advances with the next feed render. */
  private spinnerDue = false;
  private readonly listeners = new Set<() => void>();
  private spinner: ReturnType<typeof setInterval> | undefined;
  readonly backend: Backend;
  readonly preferences: Preferences;
  /** The real terminal: clearing, suspending Ink, reading the screen, OSC 52. */
  terminal: TerminalHooks | undefined;
  /** The models agents name (an agent's model outranks the Session's default). */
  agentModels: ReadonlyMap<string, string> = new Map();
  /** Where the left mouse button went down (mouse.ts). */
  mouseDown: { readonly x: number; readonly y: number } | undefined;

  constructor(private readonly options: ControllerOptions) {
    this.backend = options.backend;
    this.preferences = options.preferences;
    this.terminal = options.terminal;
    this.state = { ...initial, tipsHidden: options.preferences.get().hideTips, mouse: !options.preferences.get().mouseOff };
  }

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  getSnapshot = (): UiState => this.state;

  update(patch: Partial<UiState>): void {
    this.state = { ...this.state, ...patch, version: this.state.version + 1 };
    for (const listener of [...this.listeners]) listener();
  }

  get view(): FeedView | undefined {
    return this.feed?.getSnapshot();
  }

  get sessionId(): string | undefined {
    return this.feed?.sessionId;
  }

  info(text: string): void {
    this.update({ notice: { text, kind: "info" } });
  }

  error(error: unknown): void {
    this.update({ notice: { text: error instanceof Error ? error.message : String(error), kind: "error" } });
  }

  /** Ctrl+L, a resize: the screen and scrollback are cleared and everything is printed again once. */
  repaint(): void {
    this.terminal?.clear();
    this.update({ epoch: this.state.epoch + 1 });
  }

  // -------------------------------------------------------------------------------------------
  // Sessions

  /** Shows `sessionId` (history, then live). `asChild` keeps the current Session as its parent. */
  async openSession(sessionId: string, how: { readonly asChild?: boolean; readonly parents?: readonly string[]; readonly keepAttachments?: boolean } = {}): Promise<void> {
    const feed = new SessionFeed(this.backend.api, this.backend.server, sessionId, this.options.feedOptions);
    await feed.open(); // an unknown Session fails here, before anything changes
    const previous = this.sessionId;
    // Another Session replaces the conversation on screen (its banner names it).
    if (previous !== undefined && previous !== sessionId) this.terminal?.clear();
    this.unsubscribeFeed?.();
    this.feed?.close();
    this.feed = feed;
    this.unsubscribeFeed = feed.subscribe(() => this.scheduleFeed());
    this.descendants?.stop();
    this.descendants = new DescendantRequests(this.backend.api, this.backend.server, sessionId, () => this.onFeed());
    this.descendants.start();
    this.children?.close();
    this.children = new ChildSummaries(this.backend.api, this.backend.server, () => this.scheduleFeed());
    const parents = how.parents ?? (how.asChild && previous !== undefined ? [...this.state.parents, previous] : []);
    // Attached images belong to the draft of the Session they were attached in.
    const attachments = how.keepAttachments ? this.state.attachments : [];
    this.update({ screen: "conversation", parents, question: undefined, permissionChoice: 0, expanded: new Set(), trace: undefined, agents: [], printed: [], attachments, steers: [], cancelling: undefined });
    this.onFeed();
    void this.loadAgents(sessionId);
    // The Session's catalog snapshot: its default model in the header, its models' effort levels.
    void loadCatalog(this).catch(() => undefined);
    this.watchCatalog();
  }

  private async loadAgents(sessionId: string): Promise<void> {
    try {
      const { agents, defaultAgent } = await this.backend.agents(sessionId);
      if (this.sessionId === sessionId) this.agentModels = new Map(agents.flatMap((agent) => (agent.model !== undefined ? [[agent.id, agent.model] as const] : [])));
      if (this.sessionId === sessionId) this.update({ agents: agents.filter((agent) => agent.mode !== "subagent").map((agent) => agent.id), defaultAgent });
    } catch {
      // Tab cycling stays off without the list
    }
  }

  /** Starts a new Session in the client's directory and switches to it (the previous one keeps running); `images` go with its first prompt. */
  async newSession(prompt?: string, images: readonly Attachment[] = []): Promise<void> {
    const { session, fallback } = await this.backend.createSession();
    await this.openSession(session.id, { keepAttachments: images.length > 0 });
    if (fallback) this.info(fallback);
    else this.update({ notice: undefined });
    if ((prompt !== undefined && prompt.trim() !== "") || images.length > 0) await this.queue(prompt ?? "", images);
  }

  /**
   * Streamed deltas arrive far faster than a terminal can show them: feed changes re-render at
   * most once per FEED_FRAME_MS (keys still render at once), so a streaming Turn never queues
   * a React commit and a layout per delta ahead of the user's keystrokes.
   */
  private scheduleFeed(): void {
    if (this.feedTimer !== undefined) return;
    const wait = Math.max(0, this.lastFeed + FEED_FRAME_MS - performance.now());
    this.feedTimer = setTimeout(() => {
      this.feedTimer = undefined;
      this.onFeed();
    }, wait);
  }

  private onFeed(): void {
    this.lastFeed = performance.now();
    // Every path below ends in update(), which renders the spinner's next frame too.
    if (this.spinnerDue) this.state = { ...this.state, frame: (this.state.frame + 1) % SPINNER.length };
    this.spinnerDue = false;
    const view = this.view;
    const printed = this.state.printed;
    const fresh: Printed[] = [];
    for (const turn of view?.turns ?? []) {
      for (const part of turn.parts) if (part.type === "tool" && part.activity?.childSessionId !== undefined) this.children?.track(part.activity.childSessionId);
    }
    for (const turn of view?.turns ?? []) {
      if (turn.outcome === undefined) break;
      // A settled Turn is printed once, so it waits for its task rows' final sub-agent summaries.
      const children = turn.parts.flatMap((part) => (part.type === "tool" && part.activity?.childSessionId !== undefined ? [part.activity.childSessionId] : []));
      if (children.some((id) => this.children?.settled(id) === false)) break;
      if (!printed.some((entry) => entry.key === turn.id)) fresh.push({ key: turn.id, turn });
    }
    if (fresh.length > 0) this.update({ printed: [...printed, ...fresh] });
    this.settleLocal(view);
    const running = view?.turns.some((turn) => turn.outcome === undefined) ?? false;
    if (running && !this.spinner) {
      this.spinner = setInterval(() => {
        // The working spinner pauses while reconnecting. Its frames render with the feed's (one
        // render, not two, while text streams).
        if (this.view?.reconnecting) return;
        this.spinnerDue = true;
        this.scheduleFeed();
      }, 120);
      this.spinner.unref?.();
    } else if (!running && this.spinner) {
      clearInterval(this.spinner);
      this.spinner = undefined;
    }
    const pending = this.pending();
    const question = pending?.question;
    if (question && this.state.question?.requestId !== question.id) this.update({ question: { requestId: question.id, index: 0, selected: 0, answers: [] } });
    else if (!question && this.state.question) this.update({ question: undefined });
    else this.update({});
  }

  /** Queued follow-ups the Turn applied (or that ended with it) leave; a settled cancel's notice goes. */
  private settleLocal(view: FeedView | undefined): void {
    const turns = view?.turns ?? [];
    const applied = new Set(turns.flatMap((turn) => turn.parts.flatMap((part) => (part.type === "steering" ? part.steers.map((steer) => steer.steerId) : []))));
    const active = turns.some((turn) => turn.outcome === undefined);
    const steers = this.state.steers.filter((steer) => !applied.has(steer.steerId) && active);
    if (steers.length !== this.state.steers.length) this.update({ steers });
    const cancelling = this.state.cancelling;
    if (cancelling !== undefined && turns.find((turn) => turn.id === cancelling)?.outcome !== undefined) {
      this.update({ cancelling: undefined, notice: this.state.notice?.text === CANCELLING ? undefined : this.state.notice });
    }
  }

  /** The first open permission request or question of the viewed Session. */
  pending(): Pending | undefined {
    for (const turn of this.view?.turns ?? []) {
      if (turn.outcome !== undefined) continue;
      for (const part of turn.parts) {
        if (part.type !== "tool") continue;
        if (part.approval.state === "pending") return { kind: "approval", turn, permission: part.approval.request };
        if (part.question?.state === "pending") return { kind: "question", turn, question: part.question.request };
      }
    }
    const descendant = this.descendants?.first();
    if (descendant?.kind === "approval") return { kind: "approval", permission: descendant.request, agent: descendant.agent };
    if (descendant?.kind === "question") return { kind: "question", question: descendant.request, agent: descendant.agent };
    return undefined;
  }

  runningTurn(): Turn | undefined {
    return this.view?.turns.find((turn) => turn.phase === "running") ?? this.view?.turns.find((turn) => turn.outcome === undefined);
  }

  // -------------------------------------------------------------------------------------------
  // Prompts

  /** Queues `text` with `images` (removed from the draft once the server accepted them). */
  async queue(text: string, images: readonly Attachment[] = []): Promise<void> {
    const sessionId = this.sessionId;
    if (sessionId === undefined) return this.newSession(text, images);
    const next = this.state.next;
    const turnId = await this.backend.queue(sessionId, promptParts(text, images), { ...next, effort: nextEffort(this) });
    this.sent(images);
    // The picked model becomes the Session's: reopened later, the header and the next Turn agree.
    if (next.model !== undefined && this.view?.session?.defaultModel !== next.model) void this.backend.setDefaultModel(sessionId, next.model).catch((error: unknown) => this.error(error));
    this.feed?.follow(turnId);
    if (next.model !== undefined) this.preferences.used(next.model);
    // Selected Skills load into the next queued Turn and then clear.
    if (next.skills.length > 0) this.update({ next: { ...next, skills: [] } });
  }

  async steer(text: string, fallbackToQueue: boolean, images: readonly Attachment[] = []): Promise<void> {
    const running = this.runningTurn();
    const sessionId = this.sessionId;
    if (!running || sessionId === undefined) {
      if (fallbackToQueue) return this.queue(text, images);
      throw new Error("/steer needs a running Turn to follow up on");
    }
    const steerId = randomUUID();
    // Shown as queued at once, until the Turn applies it.
    this.update({ steers: [...this.state.steers, { steerId, text: text.trim() === "" ? "[image]" : text }] });
    try {
      await this.backend.steer(sessionId, running.id, promptParts(text, images), steerId);
      this.sent(images);
    } catch (error) {
      this.update({ steers: this.state.steers.filter((steer) => steer.steerId !== steerId) });
      const tag = (error as { name?: string }).name;
      if (fallbackToQueue && (tag === "TurnNotSteerableError" || tag === "TurnNotActiveError")) return this.queue(text, images);
      throw error;
    }
  }

  /** A prompt with the attached images: a follow-up while a Turn runs, else a new Turn. */
  async send(text: string): Promise<void> {
    const images = this.state.attachments;
    if (text.trim() === "" && images.length === 0) throw new Error("nothing to send: type a prompt or attach an image");
    if (this.runningTurn()) await this.steer(text, true, images);
    else await this.queue(text, images);
  }

  /** Images the server accepted leave the draft. */
  private sent(images: readonly Attachment[]): void {
    if (images.length > 0) this.update({ attachments: this.state.attachments.filter((image) => !images.includes(image)) });
  }

  /** Enter in the composer: a slash command, or a prompt (a follow-up while a Turn runs). */
  async submit(text: string): Promise<void> {
    const trimmed = text.trim();
    if (trimmed === "" && this.state.attachments.length === 0) return;
    this.update({ draft: "", suggestionIndex: 0, suggestionsHidden: false, notice: undefined });
    try {
      if (trimmed.startsWith("/")) {
        const parsed = parseCommand(trimmed);
        if (!parsed) throw new Error(`unknown command ${trimmed.split(/\s/)[0]} (type / to list the commands)`);
        await this.runCommand(parsed.command, parsed.argument);
        return;
      }
      try {
        await this.send(trimmed);
      } catch (error) {
        // A refused prompt comes back to the composer (its images never left), unless typing resumed.
        if (this.state.draft === "") this.update({ draft: trimmed });
        throw error;
      }
    } catch (error) {
      this.error(error);
    }
  }

  async runCommand(command: SlashCommand, argument: string): Promise<void> {
    await runSlashCommand(this, command, argument);
  }

  /** Esc with nothing else open: cancel the running Turn. */
  async cancelRunning(): Promise<boolean> {
    const running = this.runningTurn();
    if (!running || this.sessionId === undefined) return false;
    await this.backend.cancel(this.sessionId, running.id);
    if (this.view?.turns.find((turn) => turn.id === running.id)?.outcome === undefined) {
      this.update({ cancelling: running.id });
      this.info(CANCELLING);
    }
    return true;
  }

  async back(): Promise<boolean> {
    const parents = this.state.parents;
    const parent = parents[parents.length - 1];
    if (parent === undefined) return false;
    await this.openSession(parent, { parents: parents.slice(0, -1) });
    return true;
  }

  // -------------------------------------------------------------------------------------------
  // Overlays

  openPicker(spec: PickerSpec): void {
    const overlay: Overlay = { kind: "picker", spec, query: spec.query ?? "", selected: 0, items: [], loading: true };
    this.update({ overlay, leader: false });
    void this.loadPicker(spec);
  }

  async loadPicker(spec: PickerSpec): Promise<void> {
    try {
      const items = await spec.load();
      const overlay = this.state.overlay;
      if (overlay?.kind === "picker" && overlay.spec === spec) this.update({ overlay: { ...overlay, items, loading: false, error: undefined, selected: Math.min(overlay.selected, Math.max(0, items.length - 1)) } });
    } catch (error) {
      const overlay = this.state.overlay;
      if (overlay?.kind === "picker" && overlay.spec === spec) this.update({ overlay: { ...overlay, loading: false, error: error instanceof Error ? error.message : String(error) } });
    }
  }

  /** The picker's items that match its query. */
  visibleItems(overlay: Extract<Overlay, { kind: "picker" }>): readonly PickerItem[] {
    const query = overlay.query.toLowerCase();
    if (query === "") return overlay.items;
    const matching = overlay.items.filter((item) => `${item.label} ${item.detail ?? ""} ${item.id}`.toLowerCase().includes(query));
    const typed = overlay.query.trim();
    if (overlay.spec.freeform?.test(typed) && !matching.some((item) => item.id === typed)) return [...matching, { id: typed, label: typed, detail: "(typed)" }];
    return matching;
  }

  closeOverlay(): void {
    this.update({ overlay: undefined });
  }

  // -------------------------------------------------------------------------------------------

  suggestionList(): SlashCommand[] {
    if (this.state.suggestionsHidden) return [];
    return suggestions(this.state.draft, this.state.screen === "opening");
  }

  toggleTips(): void {
    const tipsHidden = !this.state.tipsHidden;
    this.preferences.setHideTips(tipsHidden);
    this.update({ tipsHidden });
    this.info(tipsHidden ? "first-run tips hidden on future launches (Ctrl+Alt+O shows them again)" : "first-run tips shown again");
  }

  quit(): void {
    this.close();
    this.update({ exited: true });
  }

  /** Follows the catalog of the viewed Session (or the runtime's before the first Session). */
  watchCatalog(): void {
    this.stopCatalogWatch?.();
    this.stopCatalogWatch = watchCatalog(this);
  }

  close(): void {
    this.stopCatalogWatch?.();
    this.stopCatalogWatch = undefined;
    clearTimeout(this.feedTimer);
    this.feedTimer = undefined;
    clearInterval(this.spinner);
    this.spinner = undefined;
    this.unsubscribeFeed?.();
    this.feed?.close();
    this.descendants?.stop();
    this.children?.close();
  }
}
