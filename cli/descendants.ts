// Sub-agent requests: the permission requests and questions of a Session's spawned descendants,
// surfaced where the user is (the terminal for `run` and `chat`, the ACP client, the TUI) so a
// sub-agent never waits unseen. They are learned from the server activity stream (`watchServer`):
// it is subscribed live, and once it announces its cursor (`server.ready`) the descendants and
// their pending lists are read once, so a request made before the subscription is not missed and
// nothing polls while idle.
import { sdk, unwrap, watchServer, type PermissionRequest, type QuestionRequest, type ServerWatchEvent, type ZeClient } from "../clients/index.js";
import type { Connection } from "./base.js";
import type { Interactions } from "./turn-io.js";

export type DescendantRequest =
  | { readonly kind: "approval"; readonly request: PermissionRequest; readonly agent: string | undefined }
  | { readonly kind: "question"; readonly request: QuestionRequest; readonly agent: string | undefined };

/** What a watch reports: a descendant's request (live or pending at the start), and a reply to one (from anywhere). */
export interface DescendantRequestEvents {
  requested(entry: DescendantRequest): void;
  resolved?(requestId: string): void;
}

/** Follows the descendants of `root` on the server stream and reports their requests. */
export class DescendantWatch {
  /** Spawned descendants of the root, with the agent each runs. */
  private readonly descendants = new Map<string, string | undefined>();
  private readonly controller = new AbortController();

  constructor(
    private readonly client: ZeClient,
    private readonly server: string,
    private readonly root: string,
    private readonly events: DescendantRequestEvents,
  ) {}

  /** Starts following the server stream (until `stop`). */
  start(): void {
    void watchServer(this.client, { server: this.server, signal: this.controller.signal, onEvent: (event) => this.onEvent(event) }).catch(() => {
      // The Session's own stream reports a lost server; this watch is best-effort on top of it.
    });
  }

  stop(): void {
    this.controller.abort();
  }

  private onEvent(event: ServerWatchEvent): void {
    switch (event.type) {
      case "server.ready":
        void this.bootstrap().catch(() => {});
        return;
      case "session.created": {
        const parent = event.session.spawnedFrom?.parentSessionId;
        if (parent !== undefined && (parent === this.root || this.descendants.has(parent))) this.descendants.set(event.session.id, event.session.agent);
        return;
      }
      case "session.turn.approval.requested":
        if (this.descendants.has(event.sessionId)) this.events.requested({ kind: "approval", request: event.request, agent: this.descendants.get(event.sessionId) });
        return;
      case "session.turn.question.asked":
        if (this.descendants.has(event.sessionId)) this.events.requested({ kind: "question", request: event.request, agent: this.descendants.get(event.sessionId) });
        return;
      case "session.turn.approval.resolved":
      case "session.turn.question.replied":
      case "session.turn.question.rejected":
        this.events.resolved?.(event.requestId);
        return;
      default:
        return;
    }
  }

  /** Reads the descendants and their pending requests once, after the stream is live. */
  private async bootstrap(): Promise<void> {
    const client = this.client.client;
    const server = this.server;
    let frontier = [this.root];
    while (frontier.length > 0) {
      const next: string[] = [];
      for (const sessionId of frontier) {
        const { sessions } = await unwrap(sdk.listSessionChildren({ client, path: { server, sessionId } }));
        for (const child of sessions) {
          this.descendants.set(child.id, child.agent);
          next.push(child.id);
        }
      }
      frontier = next;
    }
    const path = { server, sessionId: this.root };
    const [{ approvals }, { questions }] = await Promise.all([
      unwrap(sdk.listDescendantPendingApprovals({ client, path })),
      unwrap(sdk.listDescendantPendingQuestions({ client, path })),
    ]);
    for (const pending of approvals) this.events.requested({ kind: "approval", request: pending.request, agent: pending.agent });
    for (const pending of questions) this.events.requested({ kind: "question", request: pending.request, agent: pending.agent });
  }
}

/** Where the requests go: `run` and `chat` ask on the terminal (Interactions), `acp` asks the ACP client. */
export type DescendantRequestSink = Pick<Interactions, "permissionRequest" | "questionRequest">;

/** The descendants' requests of `root`, asked through `interactions` (`run`, `chat`, `acp`). */
export class DescendantRequests {
  private readonly watch: DescendantWatch;

  constructor(connection: Pick<Connection, "client" | "server">, root: string, interactions: DescendantRequestSink) {
    this.watch = new DescendantWatch(connection.client, connection.server, root, {
      requested: (entry) => (entry.kind === "approval" ? interactions.permissionRequest(entry.request, entry.agent) : interactions.questionRequest(entry.request, entry.agent)),
    });
  }

  start(): void {
    this.watch.start();
  }

  stop(): void {
    this.watch.stop();
  }
}
