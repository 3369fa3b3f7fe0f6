import { cancelProviderLogin, getProvider, startProviderLogin, waitProviderLogin, type ProviderLogin } from "../../../clients/index.js";
import { errorLine } from "../../errors.js";
import { defineCommand, flag } from "../../spec.js";
import { providerIdArg } from "./args.js";

export default defineCommand({
  summary: "Sign in to a provider that supports login; the host runs the exchange and stores the login.",
  description:
    "Prints the verification URL and the code on stderr (after the provider's notice, if it has one): open the URL, enter the code and approve. " +
    "Waits until you approve, the provider rejects the request, the code expires, or Ctrl-C (which cancels the login). " +
    "The host polls and stores the tokens, so this works over SSH; stdout gets only the safe result (`{ status, loginId, connection }` or `{ status: \"failed\", reason, message }`). " +
    "A login replaces the provider's stored connection. `provider list` shows each provider's `logins`; --method picks one when there are several.",
  examples: ["<%= config.bin %> provider login openai", "<%= config.bin %> provider login my-gateway --method device"],
  args: { provider: providerIdArg },
  flags: { method: flag.string({ description: "The login method ID, when a provider offers several." }) },
  connection: true,
  async run({ args, flags, connect, printJson }) {
    const connection = await connect();
    const client = connection.client;
    const provider = await getProvider(client, args.provider);
    const method = provider.logins.find((login) => login.id === (flags.method ?? provider.logins[0]?.id));
    if (method?.notice !== undefined) {
      const links = method.notice.links.map((link) => `  ${link.label}: ${link.url}`);
      process.stderr.write(`${[method.notice.text, ...links].join("\n")}\n`);
    }
    const started = await startProviderLogin(client, provider.id, flags.method !== undefined ? { methodId: flags.method } : {});
    if (started.status !== "pending") {
      printJson(started);
      return started.status === "connected" ? 0 : 1;
    }
    const stop = new AbortController();
    let cancelling = false;
    const onInterrupt = (): void => {
      if (cancelling) process.exit(130);
      cancelling = true;
      stop.abort();
      void cancelProviderLogin(client, provider.id, started.loginId).then(
        () => {
          process.stderr.write("cancelled: the login was cancelled\n");
          process.exit(130);
        },
        (error: unknown) => {
          process.stderr.write(`${errorLine(error)}\n`);
          process.exit(130);
        },
      );
    };
    // Listening before the code is shown: a Ctrl-C right after it still cancels the login.
    process.on("SIGINT", onInterrupt);
    process.stderr.write(`Open ${started.prompt.verificationUrl} and enter the code: ${started.prompt.userCode}\nWaiting for approval (Ctrl-C cancels the login)...\n`);
    let result: ProviderLogin;
    try {
      result = await waitProviderLogin(client, provider.id, started.loginId, { signal: stop.signal });
    } catch (error) {
      if (cancelling) return new Promise<number>(() => {}); // the cancel above exits
      throw error;
    } finally {
      if (!cancelling) process.off("SIGINT", onInterrupt);
    }
    printJson(result);
    return result.status === "connected" ? 0 : 1;
  },
});
