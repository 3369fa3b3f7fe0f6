// The file tools of the Worker host over its `/workspace` store: `read`, `write` and `edit`, the
// same ids, descriptions, input schemas, permission projections and results as the Node tools
// (services/tools/file-contract.ts is shared), acting on the store instead of a disk.
//
// Paths resolve against the Session workdir (`ctx.workdir`, inside `/workspace`); inside it the
// permission resource is workdir-relative, elsewhere in `/workspace` it is absolute and an
// `external_directory` projection asks for `<dir>/*`, as on Node. A path that leaves `/workspace`
// is `invalid_path` before anything is read. `execute` acts on the authorized
// `metadata.canonicalPath` when Core passes the projections. The Session resources `read` serves
// on Node (archived tool results, text attachments) do not exist on this host yet: those
// addresses answer `resource_not_in_session`.
import { isWorkspaceFileError } from "../../plugin/index.js";
import {
  EDIT_SPEC,
  READ_SPEC,
  WRITE_SPEC,
  applyEdit,
  checkEditChanges,
  directoryPage,
  editResultText,
  pageLines,
  readAddress,
  readResourceProjections,
  writeResultText,
  type EditInput,
  type ReadInput,
  type WriteInput,
} from "../../services/tools/file-contract.js";
import {
  DEFAULT_READ_LINES,
  MAX_DIRECTORY_ENTRIES,
  MAX_EDIT_FILE_BYTES,
  ToolFailure,
  textResult,
  throwIfAborted,
  type AnyToolDefinition,
  type PermissionProjection,
  type ToolContext,
  type ToolDefinition,
} from "../../services/tools/tool.js";
import { WORKSPACE_ROOT } from "../workspace.js";
import { parentOf, relativeTo, workspacePath } from "./paths.js";
import { decodeUtf8, type WorkspaceFileStore } from "./store.js";

interface Target {
  readonly canonicalPath: string;
  readonly resource: string;
  readonly externalDirectory?: string;
}

/** A store failure as the tool's typed failure (the same codes; the message names the resource, as on Node). */
function toolFailure(error: unknown, resource: string): ToolFailure {
  if (error instanceof ToolFailure) return error;
  const name = JSON.stringify(resource);
  if (!isWorkspaceFileError(error)) return new ToolFailure("io", `Could not access ${name}.`);
  switch (error.code) {
    case "invalid_path":
      return new ToolFailure("invalid_path", `Invalid path: ${name} is empty, contains NUL, has a name longer than 255 bytes, or leaves ${WORKSPACE_ROOT}.`);
    case "not_found":
      return new ToolFailure("not_found", `Nothing exists at ${name}.`);
    case "not_file":
      return new ToolFailure("not_file", `${name} is a directory, or a parent of it is a file.`);
    case "too_large":
    case "max_bytes_exceeded":
      return new ToolFailure("too_large", `${name} is larger than the workspace allows.`);
    case "invalid_utf8":
      return new ToolFailure("invalid_utf8", `${name} is not UTF-8 text.`);
    default:
      return new ToolFailure("io", `Could not access ${name}.`);
  }
}

/** `filePath` against the Session workdir, with its permission resources. */
function resolveTarget(store: WorkspaceFileStore, workdir: string, filePath: string): Target {
  let cwd: string;
  let canonicalPath: string;
  try {
    cwd = workspacePath(workdir);
    canonicalPath = workspacePath(filePath, cwd);
  } catch (error) {
    throw toolFailure(error, filePath);
  }
  const relative = relativeTo(cwd, canonicalPath);
  if (relative !== undefined) return { canonicalPath, resource: relative };
  const directory = store.stat(canonicalPath)?.kind === "directory" ? canonicalPath : parentOf(canonicalPath);
  return { canonicalPath, resource: canonicalPath, externalDirectory: `${directory}/*` };
}

function projections(action: string, target: Target): PermissionProjection[] {
  const out: PermissionProjection[] = [];
  if (target.externalDirectory !== undefined) out.push({ action: "external_directory", resources: [target.externalDirectory], save: [target.externalDirectory] });
  out.push({ action, resources: [target.resource], save: [target.resource], metadata: { canonicalPath: target.canonicalPath } });
  return out;
}

/** The target `execute` acts on: the authorized projection's canonical path, or a fresh resolution. */
function authorized(store: WorkspaceFileStore, ctx: ToolContext, action: string, filePath: string): Target {
  const projection = ctx.permissions?.find((candidate) => candidate.action === action);
  const canonicalPath = (projection?.metadata as { canonicalPath?: unknown } | undefined)?.canonicalPath;
  if (typeof canonicalPath === "string" && projection) {
    try {
      return { canonicalPath: workspacePath(canonicalPath), resource: projection.resources[0] ?? canonicalPath };
    } catch (error) {
      throw toolFailure(error, canonicalPath);
    }
  }
  return resolveTarget(store, ctx.workdir, filePath);
}

const noSessionResources = (): ToolFailure =>
  new ToolFailure("resource_not_in_session", "No archived tool result or text attachment of that address belongs to this Session (the Worker host keeps neither).");

/** `read`, `write` and `edit` over `store`, keyed by tool id. */
export function workspaceFileTools(store: WorkspaceFileStore): Record<string, AnyToolDefinition> {
  const read: ToolDefinition<ReadInput> = {
    ...READ_SPEC,
    discoversWorkspaceInstructions: true,
    permissions(input, ctx) {
      const address = readAddress(input);
      if (address === "filePath") return projections("read", resolveTarget(store, ctx.workdir, input.filePath!));
      return readResourceProjections(input, address);
    },
    async execute(input, ctx) {
      const address = readAddress(input);
      throwIfAborted(ctx.signal);
      if (address !== "filePath") throw noSessionResources();
      const target = authorized(store, ctx, "read", input.filePath!);
      const offset = input.offset ?? 1;
      try {
        const entry = store.stat(target.canonicalPath);
        if (entry?.kind === "directory") {
          const listed = new Map(store.list(target.canonicalPath).map((item) => [item.name, item.kind]));
          const listing = await directoryPage([...listed.keys()], (name) => listed.get(name)!, target.resource, offset, Math.min(input.limit ?? MAX_DIRECTORY_ENTRIES, MAX_DIRECTORY_ENTRIES));
          return { ...listing, instructionTarget: { path: target.canonicalPath, isDirectory: true } };
        }
        const text = await pageLines(store.chunks(target.canonicalPath), target.resource, offset, input.limit ?? DEFAULT_READ_LINES, ctx.signal);
        return { ...textResult(text), instructionTarget: { path: target.canonicalPath, isDirectory: false } };
      } catch (error) {
        throw toolFailure(error, target.resource);
      }
    },
  };

  const write: ToolDefinition<WriteInput> = {
    ...WRITE_SPEC,
    permissions: (input, ctx) => projections("edit", resolveTarget(store, ctx.workdir, input.filePath)),
    async execute(input, ctx) {
      throwIfAborted(ctx.signal);
      const target = authorized(store, ctx, "edit", input.filePath);
      const bytes = new TextEncoder().encode(input.content);
      await ctx.recordBeforeWrite?.(target.canonicalPath);
      throwIfAborted(ctx.signal);
      try {
        const { replaced } = store.writeBytes(target.canonicalPath, bytes);
        return textResult(writeResultText(target.resource, replaced, bytes.length));
      } catch (error) {
        throw toolFailure(error, target.resource);
      }
    },
  };

  const edit: ToolDefinition<EditInput> = {
    ...EDIT_SPEC,
    permissions: (input, ctx) => projections("edit", resolveTarget(store, ctx.workdir, input.filePath)),
    async execute(input, ctx) {
      checkEditChanges(input);
      throwIfAborted(ctx.signal);
      const target = authorized(store, ctx, "edit", input.filePath);
      const name = JSON.stringify(target.resource);
      let text: string;
      try {
        const entry = store.stat(target.canonicalPath);
        if (entry !== undefined && entry.kind === "file" && entry.size > MAX_EDIT_FILE_BYTES) throw new ToolFailure("too_large", `${name} is larger than ${MAX_EDIT_FILE_BYTES} bytes.`);
        text = decodeUtf8(store.readBytes(target.canonicalPath, MAX_EDIT_FILE_BYTES));
      } catch (error) {
        throw toolFailure(error, target.resource);
      }
      const { updated, count } = applyEdit(text, input, name);
      throwIfAborted(ctx.signal);
      await ctx.recordBeforeWrite?.(target.canonicalPath);
      try {
        store.writeBytes(target.canonicalPath, new TextEncoder().encode(updated));
      } catch (error) {
        throw toolFailure(error, target.resource);
      }
      return textResult(editResultText(target.resource, count));
    },
  };

  return { read, write, edit } as Record<string, AnyToolDefinition>;
}
