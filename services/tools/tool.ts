// The built-in tool contract: what a tool declares, what it receives while it runs, what it
// returns and how it fails. Wire shapes (results, questions, projections, activity, artifacts,
// faults) are the generated contract's types; only the in-process interfaces live here.
import type {
  Fault,
  PermissionRequest,
  Question,
  QuestionReplyRequest,
  ToolActivity,
  ToolArtifact,
  ToolExecution,
  ToolResult,
} from "../../generated/client/types.gen.js";
import type { AttachmentResource } from "../codemode/index.js";

// ---------------------------------------------------------------------------------------------
// Limits (values from the reference's `limits` module, plus the tools' own bounds).

/** Largest text a `read` returns, hints included: 50 KiB. */
export const MAX_FILE_READ_BYTES = 51_200;
/** Lines a `read` returns when no `limit` is given. */
export const DEFAULT_READ_LINES = 2_000;
/** Longer lines are cut to this many characters in `read` output. */
export const MAX_READ_LINE_CHARS = 2_000;
/** Largest directory page, also the default `limit` for a directory `read`. */
export const MAX_DIRECTORY_ENTRIES = 2_000;
/** Largest file `edit` loads (it must rewrite the whole file): 10 MiB. */
export const MAX_EDIT_FILE_BYTES = 10 * 1024 * 1024;
/** Shell output kept in the result (the tail): 50 KiB. */
export const MAX_SHELL_OUTPUT_BYTES = 51_200;
/** Largest accepted shell `timeoutMs` (2^31 - 1, the longest JavaScript timer). */
export const MAX_SHELL_TIMEOUT_MS = 2_147_483_647;
/** Shell timeout when the input gives none: 2 minutes. */
export const DEFAULT_SHELL_TIMEOUT_MS = 120_000;
/** Minimum spacing of shell activity updates while output arrives. */
export const SHELL_ACTIVITY_INTERVAL_MS = 250;
/** `webfetch` timeout when the input gives none. */
export const DEFAULT_WEB_FETCH_TIMEOUT_MS = 30_000;
/** Largest accepted `webfetch` `timeoutMs`. */
export const MAX_WEB_FETCH_TIMEOUT_MS = 120_000;
/** Largest response body `webfetch` reads: 5 MiB. */
export const MAX_WEB_FETCH_RESPONSE_BYTES = 5 * 1024 * 1024;
/** Longest `pause`: 10 minutes. */
export const MAX_PAUSE_MS = 600_000;
/** Where hosts conventionally put artifacts, relative to the Session workdir. */
export const DEFAULT_ARTIFACTS_SUBDIRECTORY = ".ze-harness/tool-output";

// ---------------------------------------------------------------------------------------------
// Contract shapes, derived from the generated types.

/** One action/resource check a tool asks Core to authorize (the permission request's own fields). */
export type PermissionProjection = Pick<PermissionRequest, "action" | "resources" | "save" | "metadata">;

/** One progress report (the stored `ToolActivity` without Core's bookkeeping fields). */
export type ToolActivityUpdate = Omit<ToolActivity, "checkpoint" | "updatedAt">;

/** What `execute` resolves with. */
export interface ToolOutput {
  /** The canonical result the model sees. */
  readonly result: ToolResult;
  /** The finished artifact (state `complete` or `incomplete`) when output spilled to a file. */
  readonly artifact?: ToolArtifact;
  /** What a `discoversWorkspaceInstructions` tool read: Core attaches the nested AGENTS.md files above it. */
  readonly instructionTarget?: { readonly path: string; readonly isDirectory: boolean };
  /** A CodeMode execution's raw result and console output (`execute`), for the Tool part's `execution`. */
  readonly execution?: ToolExecution;
}

/** Identity fields and signal: the context `permissions` receives. */
export interface ToolPermissionContext {
  /** The Session workdir, absolute. */
  readonly workdir: string;
  readonly sessionId: string;
  readonly turnId: string;
  readonly toolCallId: string;
  readonly signal: AbortSignal;
}

/** The context `execute` receives. */
export interface ToolContext extends ToolPermissionContext {
  /**
   * Absolute directory for output artifacts (conventionally `<workdir>/.ze-harness/tool-output`).
   * Created on demand. An artifact's reported `path` is workdir-relative when the directory lies
   * inside the workdir, absolute otherwise.
   */
  readonly artifactsDirectory: string;
  /**
   * The projections that authorized this call. File tools act on the `metadata.canonicalPath`
   * found here, so they touch exactly the target that was approved; absent, they re-resolve.
   */
  readonly permissions?: readonly PermissionProjection[];
  /** Progress for clients. A rejection fails a running `shell` call with `spawn_failed`. */
  reportActivity(update: ToolActivityUpdate): void | Promise<void>;
  /**
   * Asks the user; resolves with one answer per question, in order. Rejects with a
   * {@link QuestionDismissedError} when the user dismisses, nobody can answer, or the reply is malformed.
   */
  askQuestion(questions: readonly Question[]): Promise<QuestionReplyRequest["answers"]>;
  /** Core's sub-agents, for the `task` tool (absent where the host cannot spawn them). */
  readonly subagents?: SubagentCapability;
  /** Core's Skills, for the `skill` tool (absent where the Turn's agent offers none). */
  readonly skills?: SkillCapability;
  /** Core's tool calls from CodeMode scripts, for the `execute` tool (absent where CodeMode is off). */
  readonly codemode?: CodeModeCapability;
  /** The host's terminals, for `shell` with `tty: true` (absent where the host has none). */
  readonly terminals?: TerminalCapability;
  /** Core's view of the calling Session's own resources (prompt attachments, archived tool results); `execute` and `read` use it. */
  readonly sessionResources?: SessionResourceCapability;
  /**
   * Turn recording (patches and rewind): a file tool calls it with the absolute canonical path it
   * is about to write, and writes once it resolved, so the file's content before the Turn is kept.
   * Never rejects; absent where nothing is recorded.
   */
  readonly recordBeforeWrite?: (path: string) => Promise<void>;
}

/** The host's side of `shell` with `tty: true`: a PTY registered as one of the Session's terminals. */
export interface TerminalCapability {
  /**
   * Starts `/bin/sh -c command` in a real PTY in the Session workdir (the allowlisted environment,
   * `TERM=xterm-256color`), listed among the Session's terminals with origin this call, so clients
   * can watch it, type into it and read its display once it settled. Rejects with a
   * {@link ToolFailure} `terminal_unavailable` when no PTY can be opened.
   */
  runCommand(request: { readonly command: string }): Promise<ToolTerminalRun>;
}

/** One command running in a tool terminal. */
export interface ToolTerminalRun {
  readonly terminalId: string;
  /** Raw bytes the PTY produced so far. */
  observedBytes(): number;
  /** The last rows of the screen as plain text (no escape sequences), as parsed so far; `truncated` when earlier rows were left out. */
  preview(): { readonly text: string; readonly truncated: boolean };
  /** Calls `listener` once the screen shows newly arrived output; returns the unsubscribe. */
  onOutput(listener: () => void): () => void;
  /** SIGKILL to the PTY's process group (the command and its children). */
  kill(): void;
  /** Settles once the byte source closed and the display was stored; never rejects. */
  readonly ended: Promise<ToolTerminalEnd>;
}

export interface ToolTerminalEnd {
  readonly exitCode?: number;
  readonly signal?: string;
  /** The emulator's screen and history as plain text (soft wraps joined, trailing blanks dropped). */
  readonly text: string;
  /** The emulator's history was full: rows before `text` may be missing. */
  readonly historyFull: boolean;
  /** Raw bytes the PTY produced. */
  readonly observedBytes: number;
}

/**
 * The calling Session's own resources, under the call's authority: nothing of another Session is
 * reachable through it, whatever address a caller passes.
 */
export interface SessionResourceCapability {
  /**
   * A fresh attachments resource for this call: the Session's prompt attachments as of now (see
   * services/tools/README.md for which), copied, in order. The caller releases it when its call settles.
   */
  attachments(signal: AbortSignal): Promise<AttachmentResource>;
  /**
   * The archived tool result (a finished tool call's output artifact) of this Session whose id,
   * or recorded path, is `reference`; undefined when this Session has none such.
   */
  archive(reference: string, signal: AbortSignal): Promise<ArchivedToolResult | undefined>;
}

/** A finished tool call's archived output, as this Session recorded it. */
export interface ArchivedToolResult {
  readonly id: string;
  /** The recorded path (workdir-relative, or absolute outside the workdir). */
  readonly path: string;
  /** The file itself, absolute. */
  readonly absolutePath: string;
  readonly observedBytes: number;
  readonly state: ToolArtifact["state"];
}

/** What a Turn offers the model about itself when a tool describes itself (see `describe`). The Skill list is a developer instruction instead (reference: SkillDeclaration.modelAdvertisement). */
export interface ToolDescribeContext {
  /** The agents the `task` tool may spawn: id and what each is for. */
  readonly subagents: readonly { readonly id: string; readonly description: string }[];
  /** The tools this request offers, for the `execute` tool's list (it leaves out `directOnly` ones and itself). */
  readonly codemodeTools?: readonly CodeModeToolInfo[];
}

/** What a CodeMode script knows of a tool (a {@link ToolDefinition} is one). */
export type CodeModeToolInfo = Pick<AnyToolDefinition, "id" | "description" | "inputSchema" | "directOnly">;

/** One tool call a CodeMode script made. */
export interface CodeModeCallRequest {
  readonly toolId: string;
  /** The script's input, JSON data, not yet validated. */
  readonly input: unknown;
  /** 1 for the execution's first call, in the order the script made them (the Tool part's `origin.ordinal`). */
  readonly ordinal: number;
  /** Aborts when the script ended before the call settled, or the `execute` call itself was aborted. */
  readonly signal: AbortSignal;
}

/** Core's side of the `execute` tool. */
export interface CodeModeCapability {
  /** The tools offered with this model request; `execute` drops `directOnly` ones and itself. */
  tools(): readonly CodeModeToolInfo[];
  /**
   * Runs one call as a direct call runs (validation, `tool.execute.before` hooks, permissions,
   * execution, `tool.execute.after`), recorded with origin `{ kind: "codemode", parentToolCallId,
   * ordinal }`. A denial rejects with a {@link ToolFailure} `tool_denied` instead of failing the
   * Turn; any rejection's message and code are what the script's Error carries.
   */
  call(request: CodeModeCallRequest): Promise<ToolOutput>;
}

/** Core's side of the `task` tool: run one prompt on a child Session and wait for its answer. */
export interface SubagentCapability {
  /**
   * Runs `prompt` in a child Session pinned to `agent` (a new one, or the existing child
   * `taskId`), reporting its id through `onChild` as soon as it exists. Resolves with the child
   * Turn's answer, or with `{ background: true }` when the user detached the call. Rejects with a
   * {@link ToolFailure} (unknown or non-spawnable agent, depth limit, a failed child Turn).
   */
  run(request: {
    readonly agent: string;
    readonly prompt: string;
    readonly description: string;
    readonly taskId?: string | undefined;
    readonly onChild: (childSessionId: string) => void;
    readonly signal: AbortSignal;
  }): Promise<{ readonly childSessionId: string; readonly text: string; readonly background?: boolean }>;
}

/** Core's side of the `skill` tool: a Skill's instructions as the model receives them. */
export interface SkillCapability {
  /**
   * The Skill's text (body, directory, supporting files), or undefined when there is none of that
   * name. Rejects with a {@link ToolFailure} `skill_unavailable` when its file can no longer be loaded.
   */
  load(name: string): Promise<string | undefined>;
}

/** A JSON Schema object (the reference's restricted keyword set; root `type: "object"`). */
export type JsonSchema = { readonly type: "object" } & { readonly [keyword: string]: unknown };

/**
 * A tool. Methods (not function properties) so a `ToolDefinition<ReadInput>` is usable where a
 * `ToolDefinition<unknown>` is expected; callers must validate input first ({@link validateToolInput}).
 */
export interface ToolDefinition<I> {
  readonly id: string;
  readonly description: string;
  readonly inputSchema: JsonSchema;
  /** Successful results carry the read target for nested AGENTS.md discovery. */
  readonly discoversWorkspaceInstructions?: true;
  /** Keep out of CodeMode scripts. */
  readonly directOnly?: true;
  /** The description sent to the model, from what the Turn offers (agents to spawn, Skills); absent means `description`. */
  describe?(context: ToolDescribeContext): string;
  /** Projects validated input into the checks to authorize. Throws a {@link ToolFailure}. */
  permissions(input: I, ctx: ToolPermissionContext): PermissionProjection[];
  /** Runs one authorized call. Rejects with a {@link ToolFailure} (anything else is a bug). */
  execute(input: I, ctx: ToolContext): Promise<ToolOutput>;
}

export type AnyToolDefinition = ToolDefinition<unknown>;

/** The projection for a tool without resources: its id as action, `*` as resource and save. */
export const defaultProjection = (id: string): PermissionProjection[] => [{ action: id, resources: ["*"], save: ["*"] }];

// ---------------------------------------------------------------------------------------------
// Failures.

export type ToolFailureCode =
  /** Input did not match the tool's schema. */
  | "invalid_input"
  /** The call was aborted (Turn cancelled or ended). */
  | "interrupted"
  // files
  | "invalid_path"
  | "not_found"
  | "not_file"
  | "too_large"
  | "invalid_utf8"
  | "invalid_offset"
  | "io"
  /** Something on the way changed between the authorization and the access (a directory became a symlink): nothing was touched. */
  | "path_changed"
  // edit
  | "no_match"
  | "ambiguous_match"
  | "no_change"
  // shell
  | "spawn_failed"
  /** `tty: true` where the host has no terminals, or the PTY could not be opened. */
  | "terminal_unavailable"
  /** The OS sandbox is on but bubblewrap cannot run here: nothing ran. */
  | "sandbox_unavailable"
  // webfetch
  | "invalid_url"
  | "request_failed"
  | "timed_out"
  | "http_status"
  | "unsupported_content_type"
  // question
  | "question_dismissed"
  // task
  | "unknown_agent"
  | "subagent_depth"
  | "subagent_failed"
  // skill
  | "unknown_skill"
  | "skill_unavailable"
  // execute (CodeMode)
  | "codemode_unavailable"
  | "script_error"
  | "script_limit"
  /** A call from a CodeMode script was denied (it rejects inside the script). */
  | "tool_denied"
  // read: Session resources
  /** No archived tool result or attachment of that address belongs to the calling Session. */
  | "resource_not_in_session"
  /** A `next` continuation no longer matches its resource (it changed, or the object was altered). */
  | "invalid_continuation"
  /** The attachment is not text (an image: read its bytes in an `execute` script). */
  | "not_text"
  // an embedder's toolDispatch port (services/core/turns/dispatch.ts)
  /** The host refused the approved call: nothing ran. */
  | "tool_dispatch_refused"
  /** The host's dispatch failed or answered no usable outcome. */
  | "tool_dispatch_failed";

/** A tool call's typed failure. `message` is safe for the model and clients. */
export class ToolFailure extends Error {
  readonly _tag = "ToolFailure" as const;
  constructor(
    readonly code: ToolFailureCode,
    message: string,
  ) {
    super(message);
    this.name = "ToolFailure";
  }

  /** The contract's `Fault` for this failure. */
  toFault(): Fault {
    return { code: this.code, message: this.message };
  }
}

/** Matches a {@link ToolFailure} by its `_tag`, across module copies. */
export const isToolFailure = (cause: unknown): cause is ToolFailure =>
  typeof cause === "object" && cause !== null && (cause as { _tag?: unknown })._tag === "ToolFailure";

export const interrupted = (): ToolFailure => new ToolFailure("interrupted", "The tool call was interrupted.");

/** Throws {@link interrupted} when `signal` has aborted. */
export function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw interrupted();
}

/** The rejection `askQuestion` settles with when the questions are dismissed. */
export class QuestionDismissedError extends Error {
  readonly _tag = "QuestionDismissedError" as const;
  readonly code = "question_dismissed" as const;
  constructor() {
    super("The user dismissed this question.");
    this.name = "QuestionDismissedError";
  }
}

export const isQuestionDismissedError = (cause: unknown): cause is QuestionDismissedError =>
  typeof cause === "object" && cause !== null && (cause as { _tag?: unknown })._tag === "QuestionDismissedError";

/** A text result. */
export const textResult = (value: string): ToolOutput => ({ result: { format: "text", value } });

/** A JSON result. */
export const jsonResult = (value: unknown): ToolOutput => ({ result: { format: "json", value } });

/** UTF-8 byte length. */
export const byteLength = (text: string): number => Buffer.byteLength(text, "utf8");
