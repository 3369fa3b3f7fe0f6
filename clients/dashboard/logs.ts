// The log panel below the Sessions grid: the daemon's newest log entries (`GET v1/logs`) on a
// 5-second poll, with a level floor (info+ by default), a pause toggle and a Connections toggle:
// the daemon logs every API connection (`client.connect` / `client.disconnect`), which would
// bury everything else, so those lines are left out unless it is on. (v1/logs filters by level
// only, so the page drops them itself from a larger page.) A host without a daemon log answers
// 404 or 503; the panel then hides and stops polling.
import * as sdk from "../../generated/client/sdk.gen.js";
import type { DaemonLogEntry, DaemonLogLevel } from "../../generated/client/types.gen.js";
import { isStatus, messageOf, type Connection } from "./api.js";
import { byId, h, replaceChildren } from "./dom.js";

export const LOG_POLL_MS = 5_000;
/** v1/logs' largest page: connection lines dropped here still leave room for the rest. */
const LIMIT = 500;
const CONNECTION_EVENTS: ReadonlySet<string> = new Set(["client.connect", "client.disconnect"]);
export const isConnectionLine = (entry: DaemonLogEntry): boolean => CONNECTION_EVENTS.has(entry.event);

export class LogPanel {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private stopped = true;
  private paused = false;
  private readonly panel = byId("logs");
  private readonly list = byId("log-entries");
  private readonly level = byId<HTMLSelectElement>("log-level");
  private readonly pause = byId<HTMLButtonElement>("log-pause");
  private readonly note = byId("log-note");
  private readonly connections = byId<HTMLInputElement>("log-connections");

  constructor(private readonly connection: Connection) {
    this.level.addEventListener("change", () => this.restart());
    this.connections.addEventListener("change", () => this.restart());
    this.pause.addEventListener("click", () => {
      this.paused = !this.paused;
      this.pause.setAttribute("aria-pressed", String(this.paused));
      this.pause.textContent = this.paused ? "Resume" : "Pause";
      if (!this.paused) this.restart();
    });
  }

  start(): void {
    this.stopped = false;
    this.restart();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private restart(): void {
    clearTimeout(this.timer);
    if (!this.stopped) void this.poll();
  }

  private async poll(): Promise<void> {
    if (this.stopped || this.paused) return;
    const api = this.connection;
    const level = this.level.value as DaemonLogLevel | "";
    try {
      const page = await api.call(sdk.logs({ client: api.client.client, query: { limit: String(LIMIT), ...(level ? { level } : {}) } }));
      if (this.stopped || this.paused) return;
      this.panel.hidden = false;
      this.render(page.entries, page.truncated);
    } catch (error) {
      if (isStatus(error, 404, 503)) {
        // This host keeps no daemon log.
        this.panel.hidden = true;
        this.stop();
        return;
      }
      if (isStatus(error, 401)) return; // the page asks for a token and starts over
      this.note.textContent = `Cannot read the logs: ${messageOf(error)}`;
    }
    if (!this.stopped && !this.paused) this.timer = setTimeout(() => void this.poll(), LOG_POLL_MS);
  }

  private render(all: readonly DaemonLogEntry[], truncated: boolean): void {
    const entries = this.connections.checked ? all : all.filter((entry) => !isConnectionLine(entry));
    const hidden = all.length - entries.length;
    this.note.textContent = [
      hidden > 0 ? `${hidden} connection line${hidden === 1 ? "" : "s"} hidden.` : "",
      truncated ? "Older entries exist beyond this page." : "",
    ].filter(Boolean).join(" ");
    if (entries.length === 0) {
      replaceChildren(this.list, h("li", { class: "dim" }, "No entries."));
      return;
    }
    replaceChildren(
      this.list,
      ...entries.map((entry) =>
        h(
          "li",
          { class: `log log-${entry.level}`, "data-level": entry.level },
          h("span", { class: "mono dim" }, entry.timestamp),
          " ",
          h("span", { class: `pill level-${entry.level}` }, entry.level),
          " ",
          h("span", { class: "mono" }, entry.service, " ", entry.event),
          " ",
          h("span", { class: "mono dim" }, Object.entries(entry.fields).map(([key, value]) => `${key}=${value}`).join(" ")),
        ),
      ),
    );
  }
}
