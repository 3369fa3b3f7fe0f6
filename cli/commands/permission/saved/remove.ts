import { sdk, unwrap } from "../../../../clients/index.js";
import { sessionIdArg, uuidArg } from "../../../args.js";
import { ZeCommand } from "../../../base.js";

export default class PermissionSavedRemove extends ZeCommand {
  static override summary = "Remove one saved permission; print it as JSON.";
  static override args = { sessionId: sessionIdArg, savedId: uuidArg("SAVED_ID", "The saved permission id (permission saved list).") };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(PermissionSavedRemove);
    const connection = await this.connect(flags);
    const result = await unwrap(
      sdk.removeSavedPermission({
        client: connection.client.client,
        path: { server: connection.server, sessionId: args.sessionId, savedPermissionId: args.savedId },
      }),
    );
    this.printJson(result.permission);
  }
}
