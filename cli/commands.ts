// oclif's explicit command table (package.json → oclif.commands). Command modules
// import only oclif and the client; heavy modules load inside run().
import Completions from "./commands/completions.js";
import Serve from "./commands/serve.js";
import SessionChildren from "./commands/session/children.js";
import SessionConfigReplace from "./commands/session/config/replace.js";
import SessionConfigShow from "./commands/session/config/show.js";
import SessionCreate from "./commands/session/create.js";
import SessionDelete from "./commands/session/delete.js";
import SessionList from "./commands/session/list.js";
import SessionShow from "./commands/session/show.js";
import SessionTitle from "./commands/session/title.js";

export const commands = {
  completions: Completions,
  serve: Serve,
  "session:children": SessionChildren,
  "session:config:replace": SessionConfigReplace,
  "session:config:show": SessionConfigShow,
  "session:create": SessionCreate,
  "session:delete": SessionDelete,
  "session:list": SessionList,
  "session:show": SessionShow,
  "session:title": SessionTitle,
};
