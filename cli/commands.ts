// oclif's explicit command table (package.json → oclif.commands). Command modules
// import only oclif and the client; heavy modules load inside run().
import Chat from "./commands/chat.js";
import Completions from "./commands/completions.js";
import PermissionReply from "./commands/permission/reply.js";
import PermissionSavedList from "./commands/permission/saved/list.js";
import PermissionSavedRemove from "./commands/permission/saved/remove.js";
import QuestionReject from "./commands/question/reject.js";
import QuestionReply from "./commands/question/reply.js";
import Run from "./commands/run.js";
import Serve from "./commands/serve.js";
import SessionChildren from "./commands/session/children.js";
import SessionConfigReplace from "./commands/session/config/replace.js";
import SessionConfigShow from "./commands/session/config/show.js";
import SessionCreate from "./commands/session/create.js";
import SessionDelete from "./commands/session/delete.js";
import SessionList from "./commands/session/list.js";
import SessionShow from "./commands/session/show.js";
import SessionTitle from "./commands/session/title.js";
import TurnCancel from "./commands/turn/cancel.js";
import TurnList from "./commands/turn/list.js";
import TurnShow from "./commands/turn/show.js";

export const commands = {
  chat: Chat,
  completions: Completions,
  "permission:reply": PermissionReply,
  "permission:saved:list": PermissionSavedList,
  "permission:saved:remove": PermissionSavedRemove,
  "question:reject": QuestionReject,
  "question:reply": QuestionReply,
  run: Run,
  serve: Serve,
  "session:children": SessionChildren,
  "session:config:replace": SessionConfigReplace,
  "session:config:show": SessionConfigShow,
  "session:create": SessionCreate,
  "session:delete": SessionDelete,
  "session:list": SessionList,
  "session:show": SessionShow,
  "session:title": SessionTitle,
  "turn:cancel": TurnCancel,
  "turn:list": TurnList,
  "turn:show": TurnShow,
};
