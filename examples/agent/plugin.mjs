import { definePlugin } from 'ze-harness/plugin';

// An Agent profile: its instructions come first in every model request it makes, and it offers
// only the read tool. `ze-harness run --agent haiku ...` (or a Session's `agent`) selects it.
export default definePlugin({
  id: 'example.agent',
  setup: (context) => {
    context.agents.register({
      id: 'haiku',
      displayName: 'Haiku',
      description: 'Answers every question as one haiku.',
      mode: 'primary',
      instructions: [{ role: 'system', text: 'Answer in exactly one haiku: three lines of 5, 7 and 5 syllables.' }],
      tools: { mode: 'include', names: ['read'] },
    });
  },
});
