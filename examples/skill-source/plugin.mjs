import { definePlugin } from 'ze-harness/plugin';

// A Skill source: every SKILL.md under ./skills (relative to the host root) becomes a Skill when
// the plugin activates. A source that cannot be read fails the plugin, naming the source.
export default definePlugin({
  id: 'example.skill-source',
  setup: (context) => {
    context.skills.registerSource({ kind: 'workspace', id: 'example.local-skills', directory: 'skills', format: 'directory' });
  },
});
