import { usageError } from "../errors.js";
import { defineCommand, flag } from "../spec.js";

export default defineCommand({
  summary: "Check for and install the latest version from the installation channel.",
  description:
    "For a native installation (install.sh): checks the signed channel pointer, verifies the signed manifest and the archive's SHA-256, then switches the launcher to the new version. An idle local daemon is restarted onto it; with running Turns the release is staged and the daemon left unchanged until `ze-harness service restart`. A version pin stays pinned (rerun the installer to change it). --check only reports; --auto on|off turns background update checks on or off. Prints the result as JSON.",
  examples: ["<%= config.bin %> update", "<%= config.bin %> update --check", "<%= config.bin %> update --auto off"],
  flags: {
    check: flag.boolean({ description: "Only check the signed channel pointer; install nothing." }),
    auto: flag.string({ description: "Turn background update checks on or off.", options: ["on", "off"] }),
  },
  async run({ flags, printJson }) {
    if (flags.check === true && flags.auto !== undefined) throw usageError("--check and --auto are separate: pass one");
    const { checkForUpdate, runUpdate, setAuto } = await import("../../services/release/update.js");
    if (flags.auto !== undefined) {
      const record = setAuto(process.env, flags.auto === "on");
      printJson({ auto: record.auto, channel: record.channel, pin: record.pin });
      return;
    }
    if (flags.check === true) {
      printJson(await checkForUpdate(process.env));
      return;
    }
    printJson(await runUpdate(process.env, (line) => void process.stderr.write(`${line}\n`)));
  },
});
