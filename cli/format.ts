// `--format json|table` of the list commands. JSON (the API's, as the reference fixes it for
// scripts) stays the default, also on a terminal; `table` prints aligned columns for people:
// paths as text, times in local ISO form, one row per item. Each list command names its columns here.
import type {
  CatalogSnapshot,
  GitStatus,
  RuntimeProvidersResponse,
  Session,
  SessionTurnsResponse,
  Turn,
  WorkspaceListPage,
} from "../clients/index.js";
import { pathText } from "./readable-bytes.js";
import { flag } from "./spec.js";

export const formatFlag = flag.string({
  description: "Output format: json (the API's JSON, the default) or table (aligned columns for reading).",
  options: ["json", "table"],
  default: "json",
});

export type Format = "json" | "table";

/** Columns padded to their widest cell, a header row first; an empty list prints only the header. */
export function renderTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const clean = (cell: string): string => cell.replace(/[\u0000-\u001f\u007f]+/g, " ");
  const all = [headers, ...rows].map((row) => row.map(clean));
  const widths = headers.map((_, column) => Math.max(...all.map((row) => (row[column] ?? "").length)));
  return `${all.map((row) => row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!))).join("  ").trimEnd()).join("\n")}\n`;
}

const time = (ms: number | undefined): string => (ms === undefined ? "" : new Date(ms).toISOString().replace(/\.\d+Z$/, "Z"));
const short = (id: string): string => id.slice(0, 8);

export function sessionsTable(sessions: readonly Session[]): string {
  return renderTable(
    ["ID", "TITLE", "MODEL", "UPDATED", "WORKDIR"],
    sessions.map((session) => [short(session.id), session.title ?? "", session.defaultModel ?? "", time(session.updatedAt), session.workdir]),
  );
}

function promptText(turn: Turn): string {
  const text = turn.request.prompt.map((part) => (part.type === "text" ? part.text : `[${part.type}]`)).join(" ");
  return text.length > 60 ? `${text.slice(0, 59)}…` : text;
}

export function turnsTable(page: SessionTurnsResponse): string {
  return renderTable(
    ["SEQ", "ID", "PHASE", "OUTCOME", "MODEL", "PROMPT"],
    page.turns.map(({ turn }) => [String(turn.sequence), short(turn.id), turn.phase, turn.outcome?.kind ?? "", turn.model, promptText(turn)]),
  );
}

export function providersTable(result: RuntimeProvidersResponse): string {
  return renderTable(
    ["ID", "NAME", "AVAILABILITY", "SOURCE"],
    result.providers.map((provider) => [
      provider.id,
      provider.displayName,
      provider.availability.status === "available" ? "available" : `unavailable (${provider.availability.reason})`,
      provider.source === "via" && provider.via !== undefined ? `via ${provider.via}` : provider.source,
    ]),
  );
}

export function modelsTable(snapshot: CatalogSnapshot): string {
  return renderTable(
    ["MODEL", "NAME", "AVAILABILITY", "DEFAULT"],
    snapshot.models.map((model) => [
      model.ref,
      model.displayName,
      model.availability.status === "available" ? "available" : `unavailable (${model.availability.reason})`,
      model.ref === snapshot.defaultModel ? "*" : "",
    ]),
  );
}

export function gitStatusTable(status: GitStatus | null): string {
  if (status === null) return "not a git repository\n";
  const rows = [
    ...status.staged.map((entry) => ["staged", entry.change, pathText(entry.path)]),
    ...status.worktree.map((entry) => ["worktree", entry.change, pathText(entry.path)]),
    ...status.untracked.map((entry) => ["untracked", "", pathText(entry.path)]),
  ];
  const head = `${status.branch !== undefined ? `On branch ${status.branch}` : "HEAD detached"}${status.head ? ` (${status.head.oid.slice(0, 12)})` : " (no commits yet)"}\n`;
  return head + renderTable(["AREA", "CHANGE", "PATH"], rows);
}

export function filesTable(page: WorkspaceListPage): string {
  const table = renderTable(
    ["KIND", "SIZE", "MODIFIED", "PATH"],
    page.entries.map((entry) => [entry.kind, entry.size === undefined ? "" : String(entry.size), time(entry.modifiedAt), pathText(entry.path)]),
  );
  return page.next !== undefined ? `${table}(more: --cursor ${page.next})\n` : table;
}
