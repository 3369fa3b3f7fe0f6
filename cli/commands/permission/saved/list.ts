import { sdk, unwrap } from "../../../../clients/index.js";
import { sessionIdArg } from "../../../args.js";
import { ZeCommand } from "../../../base.js";

export default class PermissionSavedList extends ZeCommand {
  static override summary = "List a Session's saved permissions (the grants of `always` replies) as JSON.";
  static override args = { sessionId: sessionIdArg };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(PermissionSavedList);
    const connection = await this.connect(flags);
    const result = await unwrap(
      sdk.listSavedPermissions({ client: connection.client.client, path: { server: connection.server, sessionId: args.sessionId } }),
    );
    this.printJson(result.permissions);
  }
}
