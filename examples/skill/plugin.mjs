import { definePlugin } from 'ze-harness/plugin';

// A Skill: listed to the model, which loads its body with the `skill` tool when it needs it.
export default definePlugin({
  id: 'example.skill',
  setup: (context) => {
    context.skills.register({
      id: 'release-notes',
      displayName: 'Release notes',
      description: 'How this project writes release notes.',
      version: '1.0.0',
      body: ['# Release notes', '', '- One line per change, newest first.', '- Start each line with Added, Changed or Fixed.'].join('\n'),
      modelAdvertisement: { advertised: true, userInvocable: true },
      publicMetadata: { tags: ['writing'] },
    });
  },
});
