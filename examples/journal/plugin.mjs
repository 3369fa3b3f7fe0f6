import { definePlugin } from 'ze-harness/plugin';

// A journal kind: bounded durable facts a tool (or model) reports with `reportJournal`. Core
// checks each entry against the kind's schema and caps and stores it at once, attributed to the
// plugin, the Turn and the tool call; `listPluginJournal` reads them back.
export default definePlugin({
  id: 'example.journal',
  setup: (context) => {
    context.journal.registerKind({
      kind: 'deployment',
      dataSchema: {
        type: 'object',
        properties: { environment: { type: 'string', minLength: 1 } },
        required: ['environment'],
        additionalProperties: false,
      },
      maxEntriesPerTurn: 5,
    });
    context.tools.register({
      id: 'deploy',
      description: 'Deploy the current build to an environment',
      inputSchema: {
        type: 'object',
        properties: { environment: { type: 'string', enum: ['staging', 'production'] } },
        required: ['environment'],
        additionalProperties: false,
      },
      execute: async (input, tool) => {
        await tool.reportJournal({ kind: 'deployment', summary: `Deployed to ${input.environment}`, data: { environment: input.environment } });
        return { deployed: input.environment };
      },
    });
  },
});
