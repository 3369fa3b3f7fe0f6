// `tool`: what a plugin tool declares and what it receives while it runs.
import type { JournalEntry } from "./journal.js";
import type { JsonObject, JsonSchema, JsonValue } from "./json.js";
import type { PermissionProjection } from "./permission.js";
import type { QuestionAnswer, QuestionPrompt } from "./question.js";
import type { SessionWorkdir } from "./workspace.js";

/** `writing` while output is appended, `complete` once whole, `incomplete` when writing stopped early. */
export type ToolOutputArtifactState = "writing" | "complete" | "incomplete";

/** A workspace file holding tool output too large to keep inline. */
export interface ToolOutputArtifact {
  /** A UUID. */
  readonly id: string;
  /** Normalized relative workspace path (no leading `/`, no `\`, no empty, `.` or `..` segments). */
  readonly path: string;
  /** Bytes of output observed so far. */
  readonly observedBytes: number;
  readonly state: ToolOutputArtifactState;
}

/** A {@link ToolOutputArtifact} whose producer finished. */
export type TerminalToolOutputArtifact = Omit<ToolOutputArtifact, "state"> & { readonly state: "complete" | "incomplete" };

/** One progress report for a running call. Omit optional fields instead of setting them to `undefined`. */
export interface ToolActivityUpdate {
  /** At most 1,024 characters. */
  readonly message?: string | undefined;
  /** At most 50 KiB of UTF-8. */
  readonly preview?: string | undefined;
  readonly observedBytes: number;
  readonly truncated: boolean;
  readonly artifact?: ToolOutputArtifact | undefined;
}

/** The second argument to {@link ToolDeclaration.execute}. */
export type ToolExecutionContext = {
  readonly sessionId: string;
  readonly turnId: string;
  readonly workdir: SessionWorkdir;
  readonly toolCallId: string;
  /** Aborts when the Turn is cancelled or ends; a result that settles after it is discarded. */
  readonly signal: AbortSignal;
  /** The validated projections that authorized this call, exact duplicates removed. */
  readonly permissions: readonly PermissionProjection[];
  /** Reports progress for clients; rejects with a `PluginError` when the update is malformed. */
  readonly reportActivity: (activity: ToolActivityUpdate) => Promise<void>;
  /** Asks the user; rejects with `QuestionDismissedError` when dismissed or nobody can answer. */
  readonly askQuestion: (questions: readonly [QuestionPrompt, ...QuestionPrompt[]]) => Promise<readonly [QuestionAnswer, ...QuestionAnswer[]]>;
  /** Records one durable journal fact for this Turn; rejects with a `PluginError` without writing. */
  readonly reportJournal: (entry: JournalEntry) => Promise<void>;
};

/** The second argument to {@link ToolDeclaration.permissions}. */
export type ToolPermissionContext = Pick<ToolExecutionContext, "sessionId" | "turnId" | "workdir" | "toolCallId" | "signal">;

/** Identity of the model that will receive a request's tool descriptors. */
export interface ToolModelContext {
  readonly providerId: string;
  readonly modelId: string;
  readonly upstreamId: string;
}

/**
 * A tool the model can call, registered with `context.tools.register`. Core validates each call's
 * input against `inputSchema`, runs `tool.execute.before` hooks, projects `permissions`,
 * authorizes them, then runs `execute`.
 */
export interface ToolDeclaration<TInput extends object = JsonObject> {
  /** Unique among the tools loaded together; `skill` and `task` are reserved. */
  readonly id: string;
  /** Non-empty description sent to the model. */
  readonly description: string;
  /** Object-rooted JSON Schema using only the keywords {@link JsonSchema} lists. */
  readonly inputSchema: JsonSchema;
  /** Pure, synchronous per-model filter; returning false hides the tool from that request. */
  readonly availableForModel?: ((model: ToolModelContext) => boolean) | undefined;
  /** A workspace read whose successful result discovers nested `AGENTS.md` files. */
  readonly discoversWorkspaceInstructions?: true | undefined;
  /** Keeps the tool out of CodeMode scripts. */
  readonly directOnly?: true | undefined;
  /** Absent means `[{ action: id, resources: ['*'], save: ['*'] }]`. */
  readonly permissions?: ((input: TInput, context: ToolPermissionContext) => Promise<readonly PermissionProjection[]>) | undefined;
  /** Returns plain JSON: a string becomes a text result, anything else a JSON result. */
  readonly execute: (input: TInput, context: ToolExecutionContext) => Promise<JsonValue>;
}
