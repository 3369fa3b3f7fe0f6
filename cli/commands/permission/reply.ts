import { Args, Flags } from "@oclif/core";
import { sdk, unwrap } from "../../../clients/index.js";
import { sessionIdArg, uuidArg } from "../../args.js";
import { ZeCommand } from "../../base.js";

export default class PermissionReply extends ZeCommand {
  static override summary = "Reply once, always or reject to a pending permission request; print the reply and its Turn as JSON.";
  static override description =
    "`always` also saves the request's patterns for the Session. `reject` denies the Session's other pending requests too; --message is stored with the denial and shown to the model. A reply to a parent Session reaches the descendant sub-agent Session that owns the request.";
  static override examples = ["<%= config.bin %> permission reply SESSION_ID REQUEST_ID once", "<%= config.bin %> permission reply SESSION_ID REQUEST_ID reject --message 'Stay inside the repository.'"];
  static override args = {
    sessionId: sessionIdArg,
    requestId: uuidArg("REQUEST_ID", "The permission request id."),
    reply: Args.string({ name: "REPLY", description: "once, always or reject.", required: true, options: ["once", "always", "reject"] }),
  };
  static override flags = {
    message: Flags.string({ description: "A message for the model, typically with reject." }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(PermissionReply);
    const connection = await this.connect(flags);
    const result = await unwrap(
      sdk.replyPermission({
        client: connection.client.client,
        path: { server: connection.server, sessionId: args.sessionId, permissionRequestId: args.requestId },
        body: { reply: args.reply as "once" | "always" | "reject", ...(flags.message !== undefined ? { message: flags.message } : {}) },
      }),
    );
    this.printJson(result);
  }
}
