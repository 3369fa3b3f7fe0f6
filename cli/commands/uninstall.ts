import { usageError } from "../errors.js";
import { defineCommand, flag } from "../spec.js";

export default defineCommand({
  summary: "Remove this native installation while retaining user data.",
  description:
    "Removes the native launcher and the versioned executables; Sessions, credentials and configuration stay. Stop the local daemon first (`ze-harness service stop`). --remove-user-data --yes also removes the local XDG data, config and cache directories and the global skills in ~/.ze-harness/skills; a symlinked directory among them is refused rather than deleting its target. Custom databases elsewhere and project files are never touched. Remove the PATH line the installer added to your shell profile yourself. Prints what was removed as JSON.",
  examples: ["<%= config.bin %> uninstall", "<%= config.bin %> uninstall --remove-user-data --yes"],
  flags: {
    "remove-user-data": flag.boolean({ description: "Also remove Sessions, credentials, configuration, cache and global skills." }),
    yes: flag.boolean({ description: "Confirm --remove-user-data." }),
  },
  async run({ flags, printJson }) {
    if (flags["remove-user-data"] === true && flags.yes !== true) throw usageError("--remove-user-data deletes Sessions and credentials: add --yes to confirm");
    const { uninstall } = await import("../../services/release/uninstall.js");
    printJson(await uninstall(process.env, { removeUserData: flags["remove-user-data"] === true }));
  },
});
