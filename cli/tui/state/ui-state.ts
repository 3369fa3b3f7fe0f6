// The shapes of the TUI's state (controller.ts holds it): overlays, pickers, open requests,
// what is printed to the scrollback, the next Turn's choices and the whole UI snapshot.
import type { TraceState } from "./trace.js";
import type { ReasoningTurnPart, ToolTurnPart, PermissionRequest, QuestionRequest, ReasoningEffort, Turn } from "../../../clients/index.js";
import type { PickerItem } from "../components/picker.js";
import type { Attachment } from "./images.js";

export interface PickerSpec {
  readonly title: string;
  readonly hint: string;
  readonly load: () => Promise<PickerItem[]>;
  readonly choose: (item: PickerItem) => void | Promise<void>;
  /** Tab (favorite in the model picker, details in the skill picker). */
  readonly tab?: (item: PickerItem) => void;
  /** Space/Enter toggles instead of choosing; Esc then applies. */
  readonly multi?: { readonly toggle: (item: PickerItem) => void; readonly done: () => void };
  /** Filter text given with the command (`/models gpt`). */
  readonly query?: string;
  /** A query shaped like this is offered as an item of its own (a typed `PROVIDER/MODEL`). */
  readonly freeform?: RegExp;
}

export type Overlay =
  | { readonly kind: "picker"; readonly spec: PickerSpec; readonly query: string; readonly selected: number; readonly items: readonly PickerItem[]; readonly loading: boolean; readonly error?: string | undefined }
  | { readonly kind: "open"; readonly text: string }
  /** A pending device login: its URL and code until it settles; Esc cancels it. */
  | { readonly kind: "login"; readonly providerId: string; readonly loginId: string; readonly url: string; readonly code: string };

export interface Pending {
  readonly kind: "approval" | "question";
  /** The viewed Session's Turn that waits; absent for a sub-agent's request. */
  readonly turn?: Turn;
  /** The sub-agent's agent, for a descendant's request. */
  readonly agent?: string | undefined;
  readonly permission?: PermissionRequest;
  readonly question?: QuestionRequest;
}

/** A settled Turn, or the full details of one of its parts asked for with Ctrl+X T. */
export type Printed = { readonly key: string; readonly turn: Turn } | { readonly key: string; readonly part: ToolTurnPart | ReasoningTurnPart; readonly children?: readonly ToolTurnPart[] };

export interface NextTurnChoice {
  readonly model?: string | undefined;
  readonly effort?: ReasoningEffort | undefined;
  readonly agent?: string | undefined;
  readonly skills: readonly string[];
}

export interface UiState {
  readonly screen: "opening" | "conversation";
  readonly draft: string;
  /** Images attached to the draft (sent with it, kept when the submission fails, cleared on a Session switch). */
  readonly attachments: readonly Attachment[];
  /** A clipboard read is in flight (Esc cancels it). */
  readonly pasting: boolean;
  readonly suggestionIndex: number;
  readonly suggestionsHidden: boolean;
  readonly leader: boolean;
  /** The shortcut panel stays open (Ctrl+Alt+K). */
  readonly shortcutsPinned: boolean;
  /** First-run tips hidden (model-preferences.json `hideTips`). */
  readonly tipsHidden: boolean;
  readonly overlay: Overlay | undefined;
  readonly notice: { readonly text: string; readonly kind: "error" | "info" } | undefined;
  readonly expanded: ReadonlySet<string>;
  /** The Execute trace (Ctrl+X J/D/L), until Esc closes it. */
  readonly trace: TraceState | undefined;
  readonly permissionChoice: number;
  readonly question: { readonly requestId: string; readonly index: number; readonly selected: number; readonly answers: readonly string[][] } | undefined;
  readonly next: NextTurnChoice;
  /** Parent Session ids while viewing a sub-agent (innermost last). */
  readonly parents: readonly string[];
  readonly frame: number;
  readonly exited: boolean;
  readonly agents: readonly string[];
  /** What is printed to the scrollback once (Ink's Static), append-only per Session view. */
  readonly printed: readonly Printed[];
  /** The host's default agent for this Session (when it names none). */
  readonly defaultAgent: string | undefined;
  /** Bumped by a repaint (a resize, Ctrl+L): the scrollback is printed again from the start. */
  readonly epoch: number;
  /** Mouse capture (clicks, drag-to-copy); `/mouse` turns it off for the terminal's own selection. */
  readonly mouse: boolean;
  /** Follow-ups sent to the running Turn and not yet applied by it (shown as queued at once). */
  readonly steers: readonly { readonly steerId: string; readonly text: string }[];
  /** The Turn Esc is cancelling: its notice goes once it settles. */
  readonly cancelling: string | undefined;
  readonly version: number;
}
