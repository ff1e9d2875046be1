// tests/interop/sdk-v1.mjs: toolhost driven by the official TypeScript SDK
// 1.x client (@modelcontextprotocol/sdk) over stdio, legacy era: initialize,
// tools/list, echo and every conformance fixture tool, logging/setLevel and
// progress. Run by tests/interop.mk through run.mjs.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { LATEST_PROTOCOL_VERSION, LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

import {
  Checker,
  closeAndCheckExit,
  collectErrors,
  runSuite,
  serverParams,
  serverProcess,
  tapTransport
} from './common.mjs';

const t = new Checker();
const transport = new StdioClientTransport(serverParams());
const wire = tapTransport(transport);
const client = new Client({ name: 'toolhost-interop-sdk-v1', version: '1.0.0' });
const errors = collectErrors(client);

try {
  await client.connect(transport);
  const proc = serverProcess(transport);
  const init = wire.find(({ dir, msg }) => dir === 'in' && msg.result?.protocolVersion !== undefined);
  t.eq('sdk-v1: initialize answers the requested version', init?.msg.result.protocolVersion, LATEST_PROTOCOL_VERSION);
  const info = client.getServerVersion();
  t.ok('sdk-v1: serverInfo has name and version',
       typeof info?.name === 'string' && typeof info?.version === 'string', JSON.stringify(info));
  t.eq('sdk-v1: ping', await client.ping(), {});

  let levelSet = false;
  await runSuite(t, 'sdk-v1', {
    client,
    wire,
    errors,
    era: 'legacy',
    async setLogLevel(level) {
      // The legacy era has no "none": once a level was set, the quietest
      // level stands in for it.
      if (level === null && !levelSet) return {};
      await client.setLoggingLevel(level ?? 'emergency');
      levelSet = true;
      return {};
    },
    onLog: (fn) => client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => fn(n.params)),
    callWithProgress: (params, fn) => client.callTool(params, undefined, { onprogress: fn })
  });
  await closeAndCheckExit(t, 'sdk-v1', client, proc);
} catch (err) {
  t.ok('sdk-v1: session', false, err?.stack ?? err);
} finally {
  // A no-op after closeAndCheckExit; cleans up after a failed session.
  await client.close().catch(() => {});
}
process.exitCode = t.report();
