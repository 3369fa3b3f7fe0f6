import { definePlugin } from 'ze-harness/plugin';

export default definePlugin({
  id: 'example.basic',
  setup: (context) => {
    context.tools.register({
      id: 'double',
      description: 'Double a number',
      inputSchema: {
        type: 'object',
        properties: { value: { type: 'number' } },
        required: ['value'],
        additionalProperties: false,
      },
      execute: async (input) => ({ value: input['value'] * 2 }),
    });
  },
});
