// Live one-line summaries of the sub-agents behind task rows: while the child runs, its latest
// tool call; once it settles, its tool-call count and duration. Each child is followed with its
// own SessionFeed (history, then live) from the moment its task row names it.
import type { ZeClient } from "../../../clients/index.js";
import { duration, executionMs, toolSummary } from "../format.js";
import { SessionFeed, type FeedView } from "./feed.js";

export function summarize(view: FeedView): string {
  const tools = view.turns.flatMap((turn) => turn.parts.filter((part) => part.type === "tool"));
  const running = view.turns.some((turn) => turn.outcome === undefined);
  if (running) {
    const latest = tools[tools.length - 1];
    if (!latest) return "starting…";
    const summary = toolSummary(latest);
    return `${latest.toolId}${summary ? ` ${summary}` : ""}`;
  }
  const took = view.turns.reduce((sum, turn) => sum + (executionMs(turn) ?? 0), 0);
  return `${tools.length} tool call${tools.length === 1 ? "" : "s"} · ${duration(took)}`;
}

export class ChildSummaries {
  private readonly feeds = new Map<string, SessionFeed>();
  private readonly summaries = new Map<string, string>();

  constructor(
    private readonly client: ZeClient,
    private readonly server: string,
    private readonly changed: () => void,
  ) {}

  get(childSessionId: string): string | undefined {
    return this.summaries.get(childSessionId);
  }

  track(childSessionId: string): void {
    if (this.feeds.has(childSessionId)) return;
    const feed = new SessionFeed(this.client, this.server, childSessionId);
    this.feeds.set(childSessionId, feed);
    feed.subscribe(() => {
      const summary = summarize(feed.getSnapshot());
      if (summary !== this.summaries.get(childSessionId)) {
        this.summaries.set(childSessionId, summary);
        this.changed();
      }
    });
    feed.open().catch(() => this.feeds.delete(childSessionId));
  }

  close(): void {
    for (const feed of this.feeds.values()) feed.close();
    this.feeds.clear();
  }
}
