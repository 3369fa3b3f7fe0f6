// Sub-agent requests for `run` and `chat`: the permission requests and questions of a Session's
// spawned descendants, surfaced inline so a sub-agent never waits unseen. They are learned from
// the server activity stream (`watchServer`): it is subscribed live, and once it announces its
// cursor (`server.ready`) the descendants and their pending lists are read once, so a request made
// before the subscription is not missed and nothing polls while idle.
import { sdk, unwrap, watchServer, type PermissionRequest, type QuestionRequest, type ServerWatchEvent } from "../clients/index.js";
import type { Connection } from "./base.js";
import type { Interactions } from "./turn-io.js";

/** Where the requests go: `run` and `chat` ask on the terminal (Interactions), `acp` asks the ACP client. */
export type DescendantRequestSink = Pick<Interactions, "permissionRequest" | "questionRequest">;

export class DescendantRequests {
  /** Spawned descendants of the root, with the agent each runs. */
  private readonly descendants = new Map<string, string | undefined>();
  private readonly controller = new AbortController();

  constructor(
    private readonly connection: Pick<Connection, "client" | "server">,
    private readonly root: string,
    private readonly interactions: DescendantRequestSink,
  ) {}

  /** Starts following the server stream (until `stop`). */
  start(): void {
    void watchServer(this.connection.client, {
      server: this.connection.server,
      signal: this.controller.signal,
      onEvent: (event) => this.onEvent(event),
    }).catch(() => {
      // The Turn's own stream reports a lost server; this watch is best-effort on top of it.
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
        if (this.descendants.has(event.sessionId)) this.permission(event.request, this.descendants.get(event.sessionId));
        return;
      case "session.turn.question.asked":
        if (this.descendants.has(event.sessionId)) this.question(event.request, this.descendants.get(event.sessionId));
        return;
      default:
        return;
    }
  }

  /** Reads the descendants and their pending requests once, after the stream is live. */
  private async bootstrap(): Promise<void> {
    const client = this.connection.client.client;
    const server = this.connection.server;
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
    for (const pending of approvals) this.permission(pending.request, pending.agent);
    for (const pending of questions) this.question(pending.request, pending.agent);
  }

  private permission(request: PermissionRequest, agent: string | undefined): void {
    this.interactions.permissionRequest(request, agent);
  }

  private question(request: QuestionRequest, agent: string | undefined): void {
    this.interactions.questionRequest(request, agent);
  }
}
