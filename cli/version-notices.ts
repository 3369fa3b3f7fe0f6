// Server-version notices of a connected command (clients/server-version.ts): every response's
// `Ze-Harness-Version` is observed, and a server whose release or protocol differs from this
// CLI's — or that changes while the command runs (a restarted daemon, a stream reconnected to
// another server) — gets one notice. Commands write it to stderr (`notice: …`), never stdout;
// the TUI routes the notices into its own notice line instead (route()).
import { CLIENT_PROTOCOL_VERSION, serverVersionNotice, type ServerVersion } from "../clients/server-version.js";
import { locatePackage } from "../services/contract/package.js";

export type NoticeSink = (text: string) => void;

export class VersionNotices {
  private sink: NoticeSink = (text) => void process.stderr.write(`notice: ${text}\n`);
  private last: ServerVersion | undefined;
  private readonly watchers: ((version: ServerVersion) => void)[] = [];
  private readonly client: ServerVersion;

  constructor(client: ServerVersion = { protocolVersion: CLIENT_PROTOCOL_VERSION, harnessVersion: locatePackage().release }) {
    this.client = client;
  }

  /** The client's onServerVersion. */
  readonly observe = (version: ServerVersion): void => {
    const text = serverVersionNotice(version, this.client, this.last);
    this.last = version;
    if (text !== undefined) this.sink(text);
    for (const watcher of this.watchers) watcher(version);
  };

  /** Also tells `watcher` every observed server version, from the latest one already seen (the TUI's update check). */
  watch(watcher: (version: ServerVersion) => void): void {
    this.watchers.push(watcher);
    if (this.last !== undefined) watcher(this.last);
  }

  /** A notice of the command's own, shown where the version notices go. */
  notify(text: string): void {
    this.sink(text);
  }

  /** Shows later notices through `sink` (the TUI's notice line) instead of stderr. */
  route(sink: NoticeSink): void {
    this.sink = sink;
  }
}
