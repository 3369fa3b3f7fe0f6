// An ACP client (the SDK's own client app) driving the BUILT `ze-harness acp` over the child
// process's stdio, as an editor does. Everything the agent writes to stdout is kept raw, so a
// test can check that it is nothing but JSON-RPC frames.
import { spawn, type ChildProcess } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { binPath } from "../support/harness.js";

export interface AcpProcessOptions {
  readonly env: Record<string, string>;
  readonly cwd: string;
  readonly args?: readonly string[];
  /** The program and its leading arguments (default: this Node with the built bin/ze-harness.js). */
  readonly command?: readonly [string, ...string[]];
}

type PermissionHandler = (params: acp.RequestPermissionRequest) => Promise<acp.RequestPermissionResponse> | acp.RequestPermissionResponse;
type ElicitationHandler = (params: acp.CreateElicitationRequest) => Promise<acp.CreateElicitationResponse> | acp.CreateElicitationResponse;

export interface AcpProcess {
  readonly child: ChildProcess;
  /** Calls agent methods. */
  readonly agent: acp.ClientContext;
  /** Every session/update received, in order. */
  readonly updates: acp.SessionNotification[];
  readonly permissionRequests: acp.RequestPermissionRequest[];
  readonly elicitations: acp.CreateElicitationRequest[];
  /** Answers permission requests (default: reject). */
  onPermission: PermissionHandler;
  /** Answers elicitations (default: cancel). */
  onElicitation: ElicitationHandler;
  stdout(): string;
  stderr(): string;
  /** The updates of one session received from index `from` on. */
  updatesOf(sessionId: string, from?: number): acp.SessionUpdate[];
  /** Resolves with the first update (from index `from`) matching `predicate`. */
  waitForUpdate(predicate: (notification: acp.SessionNotification) => boolean, from?: number): Promise<acp.SessionNotification>;
  /** Ends stdin and resolves with the exit code once the process exited. */
  close(): Promise<number | null>;
}

export function startAcp(options: AcpProcessOptions): AcpProcess {
  const [program, ...leading] = options.command ?? [process.execPath, binPath];
  const child = spawn(program, [...leading, "acp", ...(options.args ?? [])], { cwd: options.cwd, env: options.env, stdio: ["pipe", "pipe", "pipe"] });
  let stdoutText = "";
  let stderrText = "";
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderrText += chunk));
  child.stdin!.on("error", () => {});
  const exited = new Promise<number | null>((resolvePromise) => child.once("close", (code) => resolvePromise(code)));

  const waiters = new Set<() => void>();
  const notify = (): void => {
    for (const waiter of [...waiters]) waiter();
  };
  const state = {
    updates: [] as acp.SessionNotification[],
    permissionRequests: [] as acp.RequestPermissionRequest[],
    elicitations: [] as acp.CreateElicitationRequest[],
    onPermission: (() => ({ outcome: { outcome: "selected", optionId: "reject" } })) as PermissionHandler,
    onElicitation: (() => ({ action: "cancel" })) as ElicitationHandler,
  };

  const app = acp
    .client({ name: "ze-acp-test" })
    .onNotification("session/update", ({ params }) => {
      state.updates.push(params);
      notify();
    })
    .onRequest("session/request_permission", async ({ params }) => {
      state.permissionRequests.push(params);
      notify();
      return state.onPermission(params);
    })
    .onRequest("elicitation/create", async ({ params }) => {
      state.elicitations.push(params);
      notify();
      return state.onElicitation(params);
    });

  const raw = Readable.toWeb(child.stdout!) as unknown as ReadableStream<Uint8Array>;
  const [forProtocol, forRecord] = raw.tee();
  void (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of forRecord as unknown as AsyncIterable<Uint8Array>) stdoutText += decoder.decode(chunk, { stream: true });
  })();
  const input = Writable.toWeb(child.stdin!) as unknown as WritableStream<Uint8Array>;
  const connection = app.connect(acp.ndJsonStream(input, forProtocol));

  const process_: AcpProcess = {
    child,
    agent: connection.agent,
    get updates() {
      return state.updates;
    },
    get permissionRequests() {
      return state.permissionRequests;
    },
    get elicitations() {
      return state.elicitations;
    },
    get onPermission() {
      return state.onPermission;
    },
    set onPermission(handler) {
      state.onPermission = handler;
    },
    get onElicitation() {
      return state.onElicitation;
    },
    set onElicitation(handler) {
      state.onElicitation = handler;
    },
    stdout: () => stdoutText,
    stderr: () => stderrText,
    updatesOf: (sessionId, from = 0) => state.updates.slice(from).filter((notification) => notification.sessionId === sessionId).map((notification) => notification.update),
    waitForUpdate: (predicate, from = 0) =>
      new Promise((resolvePromise, reject) => {
        const check = (): void => {
          const found = state.updates.slice(from).find(predicate);
          if (found) {
            waiters.delete(check);
            resolvePromise(found);
          } else if (child.exitCode !== null || child.signalCode !== null) {
            waiters.delete(check);
            reject(new Error(`ze-harness acp exited before the update arrived:\n${stderrText}`));
          }
        };
        waiters.add(check);
        check();
      }),
    close: async () => {
      connection.close();
      child.stdin!.end();
      return exited;
    },
  };
  child.once("close", notify);
  return process_;
}

/** The text of an update's content block ("" for other content). */
export function textOf(update: acp.SessionUpdate): string {
  if (!("content" in update) || Array.isArray(update.content) || update.content == null) return "";
  const content = update.content as acp.ContentBlock;
  return content.type === "text" ? content.text : "";
}
