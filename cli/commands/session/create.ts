import { randomUUID } from "node:crypto";
import { isAbsolute, resolve } from "node:path";
import { sdk, type CreateSessionRequest } from "../../../clients/index.js";
import { sessionIdFlag } from "../../args.js";
import { jsonCommand } from "../../json-command.js";
import { flag } from "../../spec.js";

export default jsonCommand({
  summary: "Create a Session and print it as JSON.",
  description:
    "Creates a Session in the current directory (or --workdir). Locally the directory is sent as an absolute workdir; with --remote it is sent as a clientWorkdir hint that the server accepts only inside its root.",
  examples: ["<%= config.bin %> session create", "<%= config.bin %> session create --model openai/gpt-5 --system-prompt 'Be terse.'", "<%= config.bin %> session create --agent plan"],
  flags: {
    model: flag.string({ description: "Default model as PROVIDER/MODEL." }),
    "system-prompt": flag.string({ description: "Durable Session system prompt (sent with every model request)." }),
    workdir: flag.string({ description: "Working directory: relative to the server root, or absolute." }),
    agent: flag.string({ description: "Agent the Session's Turns use when a prompt names none (a primary-capable one, such as plan)." }),
    session: sessionIdFlag("Session id to create (a UUID); generated when omitted. Repeating a create is idempotent."),
  },
  call: ({ client, server, connection }, { flags }) => {
    const body: CreateSessionRequest = {};
    if (flags.model !== undefined) body.defaultModel = flags.model;
    if (flags["system-prompt"] !== undefined) body.systemPrompt = flags["system-prompt"];
    if (flags.agent !== undefined) body.agent = flags.agent;
    if (flags.workdir !== undefined) body.workdir = connection.local && !isAbsolute(flags.workdir) ? resolve(flags.workdir) : flags.workdir;
    else if (connection.local) body.workdir = process.cwd();
    else body.clientWorkdir = process.cwd();
    return sdk.createSession({ client, path: { server, sessionId: flags.session ?? randomUUID() }, body });
  },
  print: (result) => result.session,
});
