// Every command id and how to load its declaration: one dynamic import each, so a command line
// loads only its own command (and, bundled, only that command's chunk).
import type { CommandSpec } from "./spec.js";

const loaders = {
  acp: () => import("./commands/acp.js"),
  chat: () => import("./commands/chat.js"),
  "compaction:cancel": () => import("./commands/compaction/cancel.js"),
  "compaction:list": () => import("./commands/compaction/list.js"),
  "compaction:show": () => import("./commands/compaction/show.js"),
  "compaction:start": () => import("./commands/compaction/start.js"),
  completions: () => import("./commands/completions.js"),
  "files:list": () => import("./commands/files/list.js"),
  "files:read": () => import("./commands/files/read.js"),
  "git:diff": () => import("./commands/git/diff.js"),
  "git:status": () => import("./commands/git/status.js"),
  "mcp:auth": () => import("./commands/mcp/auth.js"),
  "mcp:list": () => import("./commands/mcp/list.js"),
  "mcp:logout": () => import("./commands/mcp/logout.js"),
  "mcp:prompt": () => import("./commands/mcp/prompt.js"),
  "mcp:resource": () => import("./commands/mcp/resource.js"),
  "mcp:status": () => import("./commands/mcp/status.js"),
  "permission:reply": () => import("./commands/permission/reply.js"),
  "permission:saved:list": () => import("./commands/permission/saved/list.js"),
  "permission:saved:remove": () => import("./commands/permission/saved/remove.js"),
  "plugins:add": () => import("./commands/plugins/add.js"),
  "plugins:list": () => import("./commands/plugins/list.js"),
  "plugins:refresh": () => import("./commands/plugins/refresh.js"),
  "plugins:reload": () => import("./commands/plugins/reload.js"),
  "plugins:remove": () => import("./commands/plugins/remove.js"),
  "provider:add": () => import("./commands/provider/add.js"),
  "provider:connect": () => import("./commands/provider/connect.js"),
  "provider:disconnect": () => import("./commands/provider/disconnect.js"),
  "provider:list": () => import("./commands/provider/list.js"),
  "provider:login": () => import("./commands/provider/login.js"),
  "question:reject": () => import("./commands/question/reject.js"),
  "question:reply": () => import("./commands/question/reply.js"),
  run: () => import("./commands/run.js"),
  "runtime:models": () => import("./commands/runtime/models.js"),
  "runtime:reload": () => import("./commands/runtime/reload.js"),
  serve: () => import("./commands/serve.js"),
  "server:delete": () => import("./commands/server/delete.js"),
  "service:restart": () => import("./commands/service/restart.js"),
  "service:start": () => import("./commands/service/start.js"),
  "service:status": () => import("./commands/service/status.js"),
  "service:stop": () => import("./commands/service/stop.js"),
  "session:approvals": () => import("./commands/session/approvals.js"),
  "session:background": () => import("./commands/session/background.js"),
  "session:children": () => import("./commands/session/children.js"),
  "session:config:replace": () => import("./commands/session/config/replace.js"),
  "session:config:show": () => import("./commands/session/config/show.js"),
  "session:conversation:append": () => import("./commands/session/conversation/append.js"),
  "session:context": () => import("./commands/session/context.js"),
  "session:create": () => import("./commands/session/create.js"),
  "session:delete": () => import("./commands/session/delete.js"),
  "session:diagnostics": () => import("./commands/session/diagnostics.js"),
  "session:fork": () => import("./commands/session/fork.js"),
  "session:history": () => import("./commands/session/history.js"),
  "session:list": () => import("./commands/session/list.js"),
  "session:models": () => import("./commands/session/models.js"),
  "session:search": () => import("./commands/session/search.js"),
  "session:show": () => import("./commands/session/show.js"),
  "session:title": () => import("./commands/session/title.js"),
  "terminal:close": () => import("./commands/terminal/close.js"),
  "terminal:display": () => import("./commands/terminal/display.js"),
  "terminal:input": () => import("./commands/terminal/input.js"),
  "terminal:list": () => import("./commands/terminal/list.js"),
  "terminal:open": () => import("./commands/terminal/open.js"),
  "terminal:output": () => import("./commands/terminal/output.js"),
  "turn:cancel": () => import("./commands/turn/cancel.js"),
  "turn:list": () => import("./commands/turn/list.js"),
  "turn:rewind": () => import("./commands/turn/rewind.js"),
  "turn:show": () => import("./commands/turn/show.js"),
  tui: () => import("./commands/tui.js"),
  uninstall: () => import("./commands/uninstall.js"),
  update: () => import("./commands/update.js"),
} satisfies Record<string, () => Promise<{ default: CommandSpec<any, any> }>>;

export type CommandId = keyof typeof loaders;

export const commandIds = Object.keys(loaders) as CommandId[];

export const isCommandId = (id: string): id is CommandId => Object.hasOwn(loaders, id);

/** Topics: every proper prefix of a command id (`session`, `session:config`, …). */
export const isTopic = (id: string): boolean => commandIds.some((command) => command.startsWith(`${id}:`));

export async function loadCommand(id: CommandId): Promise<CommandSpec> {
  return (await loaders[id]()).default as CommandSpec;
}
