// The host's OS sandbox (services/sandbox), built from the config's `sandbox` key and the
// `--sandbox MODE` flag: what it hides of the harness itself (the state directory — auth.json,
// daemon-token, server.json, the default databases, daemon.log —, the global config directory,
// an auth file, database file or --config file kept elsewhere) and the resolver the shell tool,
// the terminals and the MCP hosts share. Undefined when the sandbox is off.
import { resolve } from "node:path";
import { configDirectory, homeDirectory, stateDirectory, type Config, type Env } from "../config/index.js";
import { authFileLocation } from "../providers/index.js";
import { describePolicy, HostSandbox, resolveSandboxPolicy, type SandboxResolver, type SandboxSetting } from "../sandbox/index.js";
import { resolveDatabaseLocation } from "../storage/location.js";

export interface HostSandboxSetup {
  readonly sandbox: HostSandbox;
  readonly resolver: SandboxResolver;
  /** What the shell tool's description adds for the model. */
  readonly note: string;
}

export function createHostSandbox(input: { readonly config: Config; readonly flag?: SandboxSetting | undefined; readonly env: Env; readonly database: string; readonly configPath?: string | undefined }): HostSandboxSetup | undefined {
  const policy = resolveSandboxPolicy(input.config.sandbox, input.flag);
  if (!policy) return undefined;
  const state = stateDirectory(input.env);
  const secrets = [state, configDirectory(input.env), authFileLocation(input.env).path];
  try {
    const database = resolveDatabaseLocation(input.database, state);
    if (database.kind === "file") secrets.push(...["", "-wal", "-shm", "-journal"].map((suffix) => `${database.path}${suffix}`));
  } catch {
    // An unusable database option fails the host elsewhere.
  }
  if (input.configPath !== undefined) secrets.push(resolve(input.configPath));
  const sandbox = new HostSandbox({ policy, env: input.env, home: homeDirectory(input.env), secrets });
  const writable = policy.mode === "workspace-write" ? "only the workdir and /tmp are writable" : "nothing but /tmp is writable";
  const network = policy.network.kind === "none" ? "there is no network" : policy.network.kind === "host" ? "the network is the host's" : `the network reaches only ${policy.network.hosts.join(", ")} through HTTP_PROXY`;
  return {
    sandbox,
    resolver: () => sandbox,
    note: `Commands run in an OS sandbox (${describePolicy(policy)}): ${writable}, ${network}, and credentials in the home directory are hidden.`,
  };
}
