// What a running Turn's tool calls reach of their own Session (`ToolContext.sessionResources`):
//
// - `attachments`: the Session's prompt attachments as one immutable resource for one call. They
//   are the base64 images (`{ type: "image", source: { type: "base64" } }`) of the prompts this
//   Turn's Session holds that are visible to this Turn, in history order: for each Turn admitted
//   at or before this one (history revision ≤ this Turn's; its own and those a fork copied), its
//   request's images in part order, then those of its promoted steering input (batch, then steer
//   order). Earlier Turns count when they started (a Turn cancelled while queued never reached
//   the model) and pass this Turn's `visibility` filter; undelivered or not yet promoted steers
//   do not count; URL images and content references are not bytes the host holds and are left
//   out. Compaction does not remove attachments. Names are `image-<n>.<ext>` by position, so a
//   later Turn's images only append: earlier names, offsets and digests stay what they were.
// - `archive`: a finished tool call's output artifact recorded on a tool part of this Session
//   (a fork's copied parts included), by artifact id or recorded path.
import { isAbsolute, resolve } from "node:path";
import type { HistoryVisibility, PromptPart, Steer, TurnRequest } from "../../../generated/client/types.gen.js";
import { sessionResources as store } from "../../storage/index.js";
import { AttachmentResource, type AttachmentFile } from "../../codemode/attachments.js";
import type { ArchivedToolResult, SessionResourceCapability } from "../../tools/tool.js";
import { isVisible, normalizeVisibility } from "../history/visibility.js";
import type { RunningTurn } from "./running.js";

const EXTENSIONS: Readonly<Record<string, string>> = { "image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp" };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Each running Turn's decoded attachment files, by its promoted steering batch count: within one
 * Turn only a promotion can add attachments, so later `execute` calls of the Turn reuse them
 * (the resource copies them; nothing here is handed out).
 */
const cache = new WeakMap<RunningTurn, { readonly batches: number; readonly files: Promise<AttachmentFile[]> }>();

export function sessionResources(t: RunningTurn): SessionResourceCapability {
  return {
    async attachments(signal) {
      let cached = cache.get(t);
      if (cached?.batches !== t.promotedBatches) {
        cached = { batches: t.promotedBatches, files: attachmentFiles(t) };
        const entry = cached;
        cache.set(t, entry);
        entry.files.catch(() => {
          if (cache.get(t) === entry) cache.delete(t);
        });
      }
      const files = await cached.files;
      signal.throwIfAborted();
      return new AttachmentResource(files);
    },
    async archive(reference) {
      const name = reference.split("/").pop() ?? "";
      const id = UUID.test(reference) ? reference : /^[0-9a-f-]{36}\.log$/i.test(name) && UUID.test(name.slice(0, -4)) ? name.slice(0, -4) : undefined;
      const found = (await store.findArchivedToolResult(t.deps.storage, t.sessionId, { ...(id !== undefined && { artifactId: id }), path: reference })) as
        | { id?: unknown; path?: unknown; observedBytes?: unknown; state?: unknown }
        | undefined;
      if (!found || typeof found.id !== "string" || typeof found.path !== "string" || (found.state !== "complete" && found.state !== "incomplete")) return undefined;
      return {
        id: found.id,
        path: found.path,
        absolutePath: isAbsolute(found.path) ? found.path : resolve(t.workdir, found.path),
        observedBytes: typeof found.observedBytes === "number" ? found.observedBytes : 0,
        state: found.state,
      } satisfies ArchivedToolResult;
    },
  };
}

async function attachmentFiles(t: RunningTurn): Promise<AttachmentFile[]> {
  const visibility = normalizeVisibility((t.row.request as { visibility?: HistoryVisibility }).visibility);
  const rows = await store.listPromptSources(t.deps.storage, t.sessionId, t.row.historyRevision);
  const files: AttachmentFile[] = [];
  const take = (prompt: readonly PromptPart[] | undefined): void => {
    for (const part of prompt ?? []) {
      if (part.type !== "image" || part.source.type !== "base64") continue;
      const n = files.length + 1;
      files.push({ name: `image-${n}.${EXTENSIONS[part.source.mimeType] ?? "bin"}`, mimeType: part.source.mimeType, bytes: Buffer.from(part.source.data, "base64") });
    }
  };
  for (const row of rows) {
    const own = row.turnId === t.id;
    if (!own && (row.startedAt === null || !isVisible(visibility, { kind: "turn", id: row.turnId, revision: row.historyRevision }))) continue;
    take((row.request as TurnRequest).prompt);
    const promoted = (row.steers as Steer[])
      .filter((steer): steer is Steer & { state: { state: "promoted"; batch: number } } => steer.state.state === "promoted")
      .sort((a, b) => a.state.batch - b.state.batch || a.sequence - b.sequence);
    for (const steer of promoted) take(steer.prompt);
  }
  return files;
}
