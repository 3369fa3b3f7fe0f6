import { Args } from "@oclif/core";
import { readFileSync } from "node:fs";
import { sdk, unwrap, type ReplaceSessionConfigurationRequest } from "../../../../clients/index.js";
import { sessionIdArg } from "../../../args.js";
import { ZeCommand } from "../../../base.js";

export default class SessionConfigReplace extends ZeCommand {
  static override summary = "Replace a Session's ordered rules when EXPECTED_REVISION is current; print the new configuration.";
  static override description =
    'CONFIGURATION is JSON `{"permissions":[{"action":"read","resource":"*","effect":"allow"}],"approval":{}}`, or - to read it from stdin. A stale revision fails with ConflictError and changes nothing.';
  static override args = {
    sessionId: sessionIdArg,
    expectedRevision: Args.integer({ name: "EXPECTED_REVISION", description: "The revision you read (session config show).", required: true, min: 1 }),
    configuration: Args.string({ name: "CONFIGURATION", description: "Configuration JSON, or - for stdin.", required: true }),
  };

  async run(): Promise<void> {
    const { args, flags } = await this.parse(SessionConfigReplace);
    const text = args.configuration === "-" ? readFileSync(0, "utf8") : args.configuration;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      this.error("CONFIGURATION is not valid JSON", { exit: 2 });
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) this.error("CONFIGURATION must be a JSON object", { exit: 2 });
    const configuration = parsed as Partial<ReplaceSessionConfigurationRequest>;
    const connection = await this.connect(flags);
    const result = await unwrap(
      sdk.replaceSessionConfiguration({
        client: connection.client.client,
        path: { server: connection.server, sessionId: args.sessionId },
        // Sent as given: the server validates it, so a missing field is a ValidationError, never a silent default.
        body: { ...configuration, expectedRevision: args.expectedRevision } as ReplaceSessionConfigurationRequest,
      }),
    );
    this.printJson(result.configuration);
  }
}
