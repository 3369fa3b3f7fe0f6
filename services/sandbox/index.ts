// services/sandbox: the OS sandbox (bubblewrap) for shell commands, terminals and MCP stdio servers. See README.md.
export { HostSandbox, type CommandSandbox, type HostSandboxOptions, type SandboxLaunch, type SandboxResolver } from "./sandbox.js";
export { SandboxUnavailable, isSandboxUnavailable } from "./errors.js";
export { resolveSandboxPolicy, isSandboxSetting, describePolicy, hostAllowed, SANDBOX_SETTINGS, type SandboxMode, type SandboxNetwork, type SandboxPolicy, type SandboxSetting } from "./policy.js";
export { HOME_CREDENTIALS } from "./hidden.js";
export { BRIDGE_PORT } from "./bridge.js";
