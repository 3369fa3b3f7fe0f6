// Plugin-registered Skills as the rest of the host uses them: the client listing entry and the
// text the `skill` tool returns (the same layout as a local SKILL.md, services/workspace). A
// plugin Skill has no location an ordinary tool can read, so its supporting files are only counted.
import type { CatalogOrigin, SkillListEntry } from "../../generated/client/types.gen.js";
import type { Skill } from "../../plugin/index.js";

/** The contract's `SkillListEntry` for a plugin Skill. */
export function pluginSkillEntry(skill: Skill, origin: CatalogOrigin): SkillListEntry {
  return {
    id: skill.id,
    displayName: skill.displayName,
    description: skill.description,
    advertised: skill.modelAdvertisement.advertised,
    userInvocable: skill.modelAdvertisement.userInvocable,
    origin,
  };
}

/** The loaded Skill as the model receives it: body, base location, omitted files. */
export function renderPluginSkill(skill: Skill): string {
  return [
    `<skill name="${skill.id}">`,
    `# Skill: ${skill.displayName}`,
    "",
    skill.body,
    "",
    `Base location of this Skill: ${skill.baseLocation}`,
    skill.files.length === 0
      ? "This Skill has no supporting files."
      : `This Skill has ${skill.files.length} supporting file${skill.files.length === 1 ? "" : "s"} that cannot be read from here.`,
    "</skill>",
  ].join("\n");
}
