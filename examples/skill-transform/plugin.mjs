import { definePlugin } from 'ze-harness/plugin';

// A Skill transform runs over every Skill of its scope when the plugin activates (after sources
// are read): here it appends a house rule to each body and tags each Skill.
export default definePlugin({
  id: 'example.skill-transform',
  setup: (context) => {
    context.skills.register({
      id: 'code-review',
      displayName: 'Code review',
      description: 'How to review a change in this project.',
      version: '1.0.0',
      body: '# Code review\n\nRead the tests first.',
      modelAdvertisement: { advertised: true, userInvocable: true },
      publicMetadata: { tags: [] },
    });
    context.skills.registerTransform({
      id: 'example.house-rules',
      transform: async (skill) => ({
        body: `${skill.body}\n\nHouse rule: cite the file and line you mean.`,
        publicMetadata: { ...skill.publicMetadata, tags: [...skill.publicMetadata.tags, 'house-rules'] },
      }),
    });
  },
});
