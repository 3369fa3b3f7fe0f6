import { sdk } from "../../../clients/index.js";
import { sessionIdArg } from "../../args.js";
import { idArg } from "../../short-ids.js";
import { jsonCommand } from "../../json-command.js";
import { arg, flag } from "../../spec.js";

export default jsonCommand({
  summary: "Reply once, always or reject to a pending permission request; print the reply and its Turn as JSON.",
  description:
    "`always` also saves the request's patterns for the Session. `reject` denies the Session's other pending requests too; --message is stored with the denial and shown to the model. A reply to a parent Session reaches the descendant sub-agent Session that owns the request.",
  examples: ["<%= config.bin %> permission reply SESSION_ID REQUEST_ID once", "<%= config.bin %> permission reply SESSION_ID REQUEST_ID reject --message 'Stay inside the repository.'"],
  args: {
    sessionId: sessionIdArg,
    requestId: idArg("permission", "REQUEST_ID", "The permission request."),
    reply: arg.string({ name: "REPLY", description: "once, always or reject.", required: true, options: ["once", "always", "reject"] }),
  },
  flags: { message: flag.string({ description: "A message for the model, typically with reject." }) },
  call: ({ client, server }, { args, flags }) =>
    sdk.replyPermission({
      client,
      path: { server, sessionId: args.sessionId, permissionRequestId: args.requestId },
      body: { reply: args.reply as "once" | "always" | "reject", ...(flags.message !== undefined ? { message: flags.message } : {}) },
    }),
});
