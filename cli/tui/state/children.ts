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
  /** Children whose feed shows no running Turn (or could not be opened): their summary is final. */
  private readonly done = new Set<string>();

  constructor(
    private readonly client: ZeClient,
    private readonly server: string,
    private readonly changed: () => void,
  ) {}

  get(childSessionId: string): string | undefined {
    return this.summaries.get(childSessionId);
  }

  /** True once `childSessionId`'s summary is final: its task row may be printed for good. */
  settled(childSessionId: string): boolean {
    return this.done.has(childSessionId);
  }

  track(childSessionId: string): void {
    if (this.feeds.has(childSessionId)) return;
    const feed = new SessionFeed(this.client, this.server, childSessionId);
    this.feeds.set(childSessionId, feed);
    feed.subscribe(() => {
      const view = feed.getSnapshot();
      const summary = summarize(view);
      const settled = view.session !== undefined && view.turns.length > 0 && view.turns.every((turn) => turn.outcome !== undefined);
      if (summary !== this.summaries.get(childSessionId) || settled !== this.done.has(childSessionId)) {
        this.summaries.set(childSessionId, summary);
        if (settled) this.done.add(childSessionId);
        else this.done.delete(childSessionId);
        this.changed();
      }
    });
    feed.open().catch(() => {
      this.feeds.delete(childSessionId);
      this.done.add(childSessionId); // nothing more will come: the row prints as it is
      this.changed();
    });
  }

  close(): void {
    for (const feed of this.feeds.values()) feed.close();
    this.feeds.clear();
  }
}
