// The message protocol between an execution (execution.ts) and the engine that hosts QuickJS: on
// Node a worker thread (engine.ts, worker-source.ts), in workerd the isolate itself
// (worker/codemode.ts). No Node imports: the Worker bundle takes this file.
import type { CodeModeError, CodeModeErrorCode } from "./errors.js";

/** The limits a run carries into the worker (every number the sandbox enforces). */
export interface WorkerLimits {
  readonly memoryBytes: number;
  readonly stackBytes: number;
  readonly timeoutMs: number | null;
  readonly maxPending: number;
  readonly maxString: number;
  readonly maxArray: number;
  readonly maxDepth: number;
  readonly consoleDepth: number;
  readonly maxSearch: number;
  readonly maxLogEntries: number;
  readonly maxLogBytes: number;
}

export type ToWorker =
  | {
      readonly type: "run";
      readonly id: number;
      readonly code: string;
      readonly catalog: string;
      /** The `attachments` metadata as JSON (an array; `[]` when the execution has none). */
      readonly attachments: string;
      readonly limits: WorkerLimits;
      readonly interrupt: SharedArrayBuffer;
    }
  | { readonly type: "settle"; readonly id: number; readonly callId: number; readonly ok: true; readonly json: string | undefined }
  /** An `attachments.read` answered with bytes (the script receives a Uint8Array). */
  | { readonly type: "settle"; readonly id: number; readonly callId: number; readonly ok: true; readonly bytes: ArrayBuffer }
  | { readonly type: "settle"; readonly id: number; readonly callId: number; readonly ok: false; readonly message: string; readonly code?: string; readonly name?: string }
  | { readonly type: "stop"; readonly id: number }
  | { readonly type: "fatal"; readonly id: number; readonly code: CodeModeErrorCode; readonly message: string };

export type FromWorker =
  | { readonly type: "call"; readonly id: number; readonly callId: number; readonly tool: string; readonly json: string | undefined }
  | { readonly type: "read"; readonly id: number; readonly callId: number; readonly offset: number; readonly length: number; readonly encoding: "bytes" | "base64" }
  | { readonly type: "log"; readonly id: number; readonly entry: string }
  /** The script waits on the host (tool calls or reads pending, nothing queued in the engine), having processed `settled` settles. */
  | { readonly type: "idle"; readonly id: number; readonly settled: number }
  | ({ readonly type: "done"; readonly id: number; readonly omitted: number; readonly memoryBytes: number; readonly retire: boolean } & (
      | { readonly ok: true; readonly json: string | undefined }
      | { readonly ok: false; readonly error: CodeModeError }
    ));

/** Values of the shared interrupt word. */
export const INTERRUPT = { none: 0, aborted: 1, timedOut: 2 } as const;

/** One execution's line to its worker. */
export interface EngineChannel {
  send(message: ToWorker): void;
  /** Kills the worker (an aborted run that did not stop in time); `onExit` follows. */
  terminate(): void;
  /** Gives the worker back: kept warm or ended. */
  release(): void;
}

export interface ChannelHandlers {
  onMessage(message: FromWorker): void;
  /** The worker died before the run finished. */
  onExit(error: CodeModeError): void;
}

/** Opens one execution's line to an engine with `memoryBytes` of memory; rejects when the engine cannot start. */
export type OpenChannel = (handlers: ChannelHandlers, memoryBytes: number) => Promise<EngineChannel>;
