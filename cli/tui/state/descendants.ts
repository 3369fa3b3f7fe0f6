// Sub-agents' permission requests and questions, shown inline in the Session that spawned them
// so a sub-agent never waits unseen. Learned from the server stream (watchServer): live from
// its start, and once it announces its cursor the descendants and their pending lists are read
// once (nothing polls while idle). A reply, wherever it came from, removes the request.
import { sdk, unwrap, watchServer, type PermissionRequest, type QuestionRequest, type ServerWatchEvent, type ZeClient } from "../../../clients/index.js";

export type DescendantRequest =
  | { readonly kind: "approval"; readonly request: PermissionRequest; readonly agent: string | undefined }
  | { readonly kind: "question"; readonly request: QuestionRequest; readonly agent: string | undefined };

export class DescendantRequests {
  private readonly descendants = new Map<string, string | undefined>();
  private readonly open = new Map<string, DescendantRequest>();
  private readonly settled = new Set<string>();
  private readonly abort = new AbortController();

  constructor(
    private readonly client: ZeClient,
    private readonly server: string,
    private readonly root: string,
    private readonly changed: () => void,
  ) {}

  start(): void {
    void watchServer(this.client, { server: this.server, signal: this.abort.signal, onEvent: (event) => this.onEvent(event) }).catch(() => {
      // best-effort: the Session's own stream reports a lost server
    });
  }

  stop(): void {
    this.abort.abort();
  }

  /** The oldest open request, if any. */
  first(): DescendantRequest | undefined {
    return this.open.values().next().value;
  }

  private add(entry: DescendantRequest): void {
    if (this.settled.has(entry.request.id) || this.open.has(entry.request.id)) return;
    this.open.set(entry.request.id, entry);
    this.changed();
  }

  private remove(requestId: string): void {
    this.settled.add(requestId);
    if (this.open.delete(requestId)) this.changed();
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
        if (this.descendants.has(event.sessionId)) this.add({ kind: "approval", request: event.request, agent: this.descendants.get(event.sessionId) });
        return;
      case "session.turn.question.asked":
        if (this.descendants.has(event.sessionId)) this.add({ kind: "question", request: event.request, agent: this.descendants.get(event.sessionId) });
        return;
      case "session.turn.approval.resolved":
      case "session.turn.question.replied":
      case "session.turn.question.rejected":
        this.remove(event.requestId);
        return;
      default:
        return;
    }
  }

  private async bootstrap(): Promise<void> {
    const client = this.client.client;
    let frontier = [this.root];
    while (frontier.length > 0) {
      const next: string[] = [];
      for (const sessionId of frontier) {
        const { sessions } = await unwrap(sdk.listSessionChildren({ client, path: { server: this.server, sessionId } }));
        for (const child of sessions) {
          this.descendants.set(child.id, child.agent);
          next.push(child.id);
        }
      }
      frontier = next;
    }
    const path = { server: this.server, sessionId: this.root };
    const [{ approvals }, { questions }] = await Promise.all([
      unwrap(sdk.listDescendantPendingApprovals({ client, path })),
      unwrap(sdk.listDescendantPendingQuestions({ client, path })),
    ]);
    for (const pending of approvals) this.add({ kind: "approval", request: pending.request, agent: pending.agent });
    for (const pending of questions) this.add({ kind: "question", request: pending.request, agent: pending.agent });
  }
}
