import { sdk, unwrap, type WorkspaceListPage } from "../../../clients/index.js";
import { sessionIdArg } from "../../args.js";
import { usageError } from "../../errors.js";
import { arg, defineCommand, flag } from "../../spec.js";
import { workspacePathValue } from "../../workspace-path.js";
import { filesTable, formatFlag } from "../../format.js";

export default defineCommand({
  summary: "Print a page of a directory's direct children in a Session's workdir as JSON.",
  description:
    "Prints `{ path, directoryIdentity, entries: [{ path: { bytesBase64, path }, kind: file|directory|symlink|other, size?, modifiedAt }], next? }`: at most 128 entries, sorted by name bytes (`path` is the text of the exact bytes, left out when they are not UTF-8); " +
    "symlinks are not followed, `.git` and the workdir's private state are left out. Pass `next` as --cursor for the next page, or use --all to read every page.",
  examples: ["<%= config.bin %> files list SESSION_ID", "<%= config.bin %> files list SESSION_ID src --all"],
  args: { sessionId: sessionIdArg, path: arg.string({ name: "PATH", description: "The directory, relative to the workdir (default: the workdir).", required: false }) },
  flags: {
    path: flag.string({ description: "The directory, as the PATH argument (either one)." }),
    base64: flag.boolean({ description: "PATH (or --path) is the exact path bytes in Base64 (bytesBase64)." }),
    cursor: flag.string({ description: "Continue after this page's `next`." }),
    all: flag.boolean({ description: "Follow `next` and print every entry in one page.", exclusive: ["cursor"] }),
    format: formatFlag,
  },
  connection: true,
  async run({ args, flags, connect, printJson }) {
    if (args.path !== undefined && flags.path !== undefined) throw usageError("give the directory as PATH or as --path, not both");
    const given = args.path ?? flags.path;
    const path = given === undefined ? undefined : workspacePathValue(given, flags.base64);
    const connection = await connect();
    const read = (cursor: string | undefined) =>
      unwrap(
        sdk.listFiles({
          client: connection.client.client,
          path: { server: connection.server, sessionId: args.sessionId },
          query: { ...(path !== undefined ? { path } : {}), ...(cursor !== undefined ? { cursor } : {}) },
        }),
      );
    let page: WorkspaceListPage = await read(flags.cursor);
    if (flags.all) {
      const entries = [...page.entries];
      while (page.next !== undefined) {
        page = await read(page.next);
        entries.push(...page.entries);
      }
      page = { path: page.path, directoryIdentity: page.directoryIdentity, entries };
    }
    if (flags.format === "table") process.stdout.write(filesTable(page));
    else printJson(page);
  },
});
