import { sdk, type ReplaceSessionConfigurationRequest } from "../../../../clients/index.js";
import { readJsonArgument, sessionIdArg } from "../../../args.js";
import { usageError } from "../../../errors.js";
import { jsonCommand } from "../../../json-command.js";
import { arg } from "../../../spec.js";

export default jsonCommand({
  summary: "Replace a Session's ordered rules when EXPECTED_REVISION is current; print the new configuration.",
  description:
    'CONFIGURATION is JSON `{"permissions":[{"action":"read","resource":"*","effect":"allow"}],"approval":{}}`, or - to read it from stdin. A stale revision fails with ConflictError and changes nothing.',
  args: {
    sessionId: sessionIdArg,
    expectedRevision: arg.integer({ name: "EXPECTED_REVISION", description: "The revision you read (session config show).", required: true, min: 1 }),
    configuration: arg.string({ name: "CONFIGURATION", description: "Configuration JSON, or - for stdin.", required: true }),
  },
  input: async ({ args }) => {
    const parsed = await readJsonArgument(args.configuration, "CONFIGURATION");
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw usageError("CONFIGURATION must be a JSON object");
    return parsed as Partial<ReplaceSessionConfigurationRequest>;
  },
  call: ({ client, server }, { args }, configuration) =>
    sdk.replaceSessionConfiguration({
      client,
      path: { server, sessionId: args.sessionId },
      // Sent as given: the server validates it, so a missing field is a ValidationError, never a silent default.
      body: { ...configuration, expectedRevision: args.expectedRevision } as ReplaceSessionConfigurationRequest,
    }),
  print: (result) => result.configuration,
});
