import { sdk, unwrap } from "../../../clients/index.js";
import { usageError } from "../../errors.js";
import { defineCommand, flag } from "../../spec.js";
import { formatFlag, modelsTable } from "../../format.js";

export default defineCommand({
  summary: "Print the runtime model catalog as JSON, or refresh it with --refresh.",
  description:
    "Without --refresh prints `{ hostRevision, defaultModel?, providers, models }`. " +
    "With --refresh the host revalidates the cached models.dev catalog (ZE_HARNESS_MODELS_URL; refreshed data takes effect on `runtime reload`) and lists each discovery provider's models again, then prints `{ providers: [{ providerId, status: updated | unchanged | failed, message? }], snapshot }` (exit 1 when a provider failed). " +
    "--provider limits the refresh to one provider.",
  examples: ["<%= config.bin %> runtime models", "<%= config.bin %> runtime models --refresh", "<%= config.bin %> runtime models --refresh --provider local-proxy"],
  flags: {
    refresh: flag.boolean({ description: "Refresh the catalog data and repeat discovery first." }),
    provider: flag.string({ description: "Refresh only this provider (with --refresh)." }),
    format: formatFlag,
  },
  connection: true,
  async run({ flags, connect, printJson }) {
    if (flags.provider !== undefined && flags.refresh !== true) throw usageError("--provider needs --refresh");
    const connection = await connect();
    const client = connection.client.client;
    if (flags.refresh !== true) {
      const snapshot = await unwrap(sdk.models({ client }));
      if (flags.format === "table") process.stdout.write(modelsTable(snapshot));
      else printJson(snapshot);
      return 0;
    }
    const result = await unwrap(sdk.refreshProviderModels({ client, body: flags.provider !== undefined ? { providerId: flags.provider } : {} }));
    if (flags.format === "table") process.stdout.write(modelsTable(result.snapshot));
    else printJson(result);
    return result.providers.some((outcome) => outcome.status === "failed") ? 1 : 0;
  },
});
