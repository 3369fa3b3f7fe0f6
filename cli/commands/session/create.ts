import { Flags } from "@oclif/core";
import { randomUUID } from "node:crypto";
import { isAbsolute, resolve } from "node:path";
import { sdk, unwrap, type CreateSessionRequest } from "../../../clients/index.js";
import { sessionIdFlag } from "../../args.js";
import { ZeCommand } from "../../base.js";

export default class SessionCreate extends ZeCommand {
  static override summary = "Create a Session and print it as JSON.";
  static override description =
    "Creates a Session in the current directory (or --workdir). Locally the directory is sent as an absolute workdir; with --remote it is sent as a clientWorkdir hint that the server accepts only inside its root.";
  static override examples = ["<%= config.bin %> session create", "<%= config.bin %> session create --model openai/gpt-5 --system-prompt 'Be terse.'"];
  static override flags = {
    model: Flags.string({ description: "Default model as PROVIDER/MODEL." }),
    "system-prompt": Flags.string({ description: "Durable Session system prompt (sent with every model request)." }),
    workdir: Flags.string({ description: "Working directory: relative to the server root, or absolute." }),
    session: sessionIdFlag({ description: "Session id to create (a UUID); generated when omitted. Repeating a create is idempotent." }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(SessionCreate);
    const connection = await this.connect(flags);
    const body: CreateSessionRequest = {};
    if (flags.model !== undefined) body.defaultModel = flags.model;
    if (flags["system-prompt"] !== undefined) body.systemPrompt = flags["system-prompt"];
    if (flags.workdir !== undefined) body.workdir = connection.local && !isAbsolute(flags.workdir) ? resolve(flags.workdir) : flags.workdir;
    else if (connection.local) body.workdir = process.cwd();
    else body.clientWorkdir = process.cwd();
    const result = await unwrap(
      sdk.createSession({
        client: connection.client.client,
        path: { server: connection.server, sessionId: flags.session ?? randomUUID() },
        body,
      }),
    );
    this.printJson(result.session);
  }
}
