// tests/interop/primitives-v1.mjs: resources, prompts, completion and their
// list_changed notifications, driven by the official TypeScript SDK 1.x
// client (@modelcontextprotocol/sdk) over stdio in the legacy era
// (2025-11-25), in both isolation modes: the checks of primitives.mjs.
// Run by tests/interop.mk through run.mjs.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  ElicitRequestSchema,
  LATEST_PROTOCOL_VERSION,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema
} from '@modelcontextprotocol/sdk/types.js';

import { Checker, collectErrors, serverParams, serverProcess, tapTransport } from './common.mjs';
import { elicitor, runPrimitives } from './primitives.mjs';

// SDK 1.x registers notification handlers by schema, not by method name.
const SCHEMAS = {
  'notifications/resources/updated': ResourceUpdatedNotificationSchema,
  'notifications/resources/list_changed': ResourceListChangedNotificationSchema,
  'notifications/prompts/list_changed': PromptListChangedNotificationSchema
};
const ITEMS = { listResources: 'resources', listResourceTemplates: 'resourceTemplates', listPrompts: 'prompts' };

const t = new Checker();
t.eq('primitives-v1: the SDK speaks 2025-11-25', LATEST_PROTOCOL_VERSION, '2025-11-25');

await t.guard('primitives-v1', () => runPrimitives(t, 'primitives-v1', async (opts) => {
  const transport = new StdioClientTransport(serverParams(opts));
  const wire = tapTransport(transport);
  const client = new Client({ name: 'toolhost-interop-primitives-v1', version: '1.0.0' },
                            { capabilities: { elicitation: {} }, listChanged: opts.listChanged });
  const errors = collectErrors(client);
  const { asked, answer } = elicitor();
  client.setRequestHandler(ElicitRequestSchema, (req) => answer(req.params));
  await client.connect(transport);
  return {
    client,
    wire,
    errors,
    asked,
    era: 'legacy',
    proc: serverProcess(transport),
    onNotification: (method, fn) => client.setNotificationHandler(SCHEMAS[method], fn),
    // SDK 1.x returns one page per call: the caller follows nextCursor.
    async listAll(verb) {
      const items = [];
      let cursor;
      do {
        const page = await client[verb](cursor === undefined ? {} : { cursor });
        items.push(...page[ITEMS[verb]]);
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      return items;
    }
  };
}));
process.exitCode = t.report();
