import { usageError } from "../errors.js";
import { defineCommand, flag } from "../spec.js";

export default defineCommand({
  summary: "Check for and install the latest version from the installation channel.",
  description:
    "For a native installation (install.sh): checks the signed channel pointer, verifies the signed manifest and the archive's SHA-256, then switches the launcher to the new version. An idle local daemon is restarted onto it; with running Turns the release is staged and the daemon left unchanged until `ze-harness service restart`. A version pin stays pinned (rerun the installer to change it). --check only reports; --stage verifies and stages a newer release without switching the launcher or touching the daemon (what the daemon's background checks run; `update` or `service restart` activates it); --auto on|off turns those background checks on or off (a channel install checks when the local daemon starts and every six hours while it runs). Prints the result as JSON.",
  examples: ["<%= config.bin %> update", "<%= config.bin %> update --check", "<%= config.bin %> update --stage", "<%= config.bin %> update --auto off"],
  flags: {
    check: flag.boolean({ description: "Only check the signed channel pointer; install nothing." }),
    stage: flag.boolean({ description: "Verify and stage a newer release; switch neither the launcher nor the daemon." }),
    auto: flag.string({ description: "Turn background update checks on or off.", options: ["on", "off"] }),
  },
  async run({ flags, printJson }) {
    if ([flags.check === true, flags.stage === true, flags.auto !== undefined].filter(Boolean).length > 1) throw usageError("--check, --stage and --auto are separate: pass one");
    const { checkForUpdate, runUpdate, setAuto, stageUpdate } = await import("../../services/release/update.js");
    if (flags.auto !== undefined) {
      const record = setAuto(process.env, flags.auto === "on");
      printJson({ auto: record.auto, channel: record.channel, pin: record.pin });
      return;
    }
    if (flags.check === true) {
      printJson(await checkForUpdate(process.env));
      return;
    }
    if (flags.stage === true) {
      printJson(await stageUpdate(process.env, (line) => void process.stderr.write(`${line}\n`)));
      return;
    }
    printJson(await runUpdate(process.env, (line) => void process.stderr.write(`${line}\n`)));
  },
});
