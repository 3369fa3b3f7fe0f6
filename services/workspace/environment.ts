// The host environment a child program (a `shell` tool call, a terminal) inherits: an allowlist,
// so provider keys and other secrets of the host process never reach model-written commands.
const ENV_ALLOWLIST = ["PATH", "HOME", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TERM", "TMPDIR", "TZ", "USER", "LOGNAME", "SHELL"];

export function childEnvironment(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ENV_ALLOWLIST) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  env["PATH"] ??= "/usr/local/bin:/usr/bin:/bin";
  return env;
}
