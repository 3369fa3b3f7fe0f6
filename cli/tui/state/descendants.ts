// Sub-agents' permission requests and questions, shown inline in the Session that spawned them
// (followed by cli/descendants.ts's DescendantWatch). Requests stay open in arrival order until a
// reply, wherever it came from, removes them; a reply seen first keeps its request from opening.
import type { ZeClient } from "../../../clients/index.js";
import { DescendantWatch, type DescendantRequest } from "../../descendants.js";

export type { DescendantRequest } from "../../descendants.js";

export class DescendantRequests {
  private readonly open = new Map<string, DescendantRequest>();
  private readonly settled = new Set<string>();
  private readonly watch: DescendantWatch;

  constructor(client: ZeClient, server: string, root: string, private readonly changed: () => void) {
    this.watch = new DescendantWatch(client, server, root, { requested: (entry) => this.add(entry), resolved: (requestId) => this.remove(requestId) });
  }

  start(): void {
    this.watch.start();
  }

  stop(): void {
    this.watch.stop();
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
}
