// tests/interop/client-v2.mjs: toolhost driven by the official TypeScript
// client 2.x (@modelcontextprotocol/client) over stdio, in three sessions:
// legacy (initialize), modern pinned to 2026-07-28 (per-request _meta, no
// handshake) and auto (the client probes with server/discover and must pick
// the modern era). Each runs the common suite. Run by tests/interop.mk
// through run.mjs.
import { Client, LATEST_PROTOCOL_VERSION, LOG_LEVEL_META_KEY } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

import {
  Checker,
  closeAndCheckExit,
  collectErrors,
  runSuite,
  serverParams,
  serverProcess,
  tapTransport
} from './common.mjs';

const MODERN = '2026-07-28';
const SERVER_INFO_META_KEY = 'io.modelcontextprotocol/serverInfo';
const t = new Checker();

const sessions = [
  { label: 'client-v2 legacy', want: 'legacy', options: {} },
  { label: 'client-v2 modern', want: 'modern', options: { versionNegotiation: { mode: { pin: MODERN } } } },
  { label: 'client-v2 auto', want: 'modern', options: { versionNegotiation: { mode: 'auto' } } }
];

// Era-specific checks of the handshake and of tools/list on the wire.
function checkEra(label, era, client, wire) {
  const incoming = wire.filter(({ dir }) => dir === 'in').map(({ msg }) => msg);
  if (era === 'legacy') {
    const init = incoming.find((m) => m.result?.protocolVersion !== undefined);
    t.eq(`${label}: initialize answers the requested version`, init?.result.protocolVersion, LATEST_PROTOCOL_VERSION);
    t.eq(`${label}: negotiated version`, client.getNegotiatedProtocolVersion(), LATEST_PROTOCOL_VERSION);
    return;
  }
  const sent = wire.filter(({ dir }) => dir === 'out').map(({ msg }) => msg);
  t.ok(`${label}: no initialize sent`, !sent.some((m) => m.method === 'initialize'),
       sent.map((m) => m.method).join(','));
  const listReq = sent.find((m) => m.method === 'tools/list');
  const list = incoming.find((m) => m.id !== undefined && m.id === listReq?.id)?.result;
  t.eq(`${label}: tools/list resultType`, list?.resultType, 'complete');
  t.ok(`${label}: tools/list has ttlMs`, Number.isInteger(list?.ttlMs) && list.ttlMs >= 0, String(list?.ttlMs));
  t.ok(`${label}: tools/list has cacheScope`, ['public', 'private'].includes(list?.cacheScope), String(list?.cacheScope));
  const info = list?._meta?.[SERVER_INFO_META_KEY];
  t.ok(`${label}: tools/list _meta serverInfo`,
       typeof info?.name === 'string' && typeof info?.version === 'string', JSON.stringify(info));
}

for (const { label, want, options } of sessions) {
  const transport = new StdioClientTransport(serverParams());
  const wire = tapTransport(transport);
  const client = new Client({ name: 'toolhost-interop-client-v2', version: '2.0.0' }, options);
  const errors = collectErrors(client);
  try {
    await client.connect(transport);
    const proc = serverProcess(transport);
    // The era the client settled on must be the one this session wants; the
    // suite then runs in the era actually in use, so its checks still apply.
    const era = client.getNegotiatedProtocolVersion() === MODERN ? 'modern' : 'legacy';
    t.eq(`${label}: era`, era, want);
    const info = client.getServerVersion();
    t.ok(`${label}: serverInfo has name and version`,
         typeof info?.name === 'string' && typeof info?.version === 'string', JSON.stringify(info));
    if (era === 'legacy') t.eq(`${label}: ping`, await client.ping(), {});

    let levelSet = false;
    await runSuite(t, label, {
      client,
      wire,
      errors,
      era,
      async setLogLevel(level) {
        // Modern: the level travels in each request's _meta.
        if (era === 'modern') return level === null ? {} : { _meta: { [LOG_LEVEL_META_KEY]: level } };
        if (level === null && !levelSet) return {};
        await client.setLoggingLevel(level ?? 'emergency');
        levelSet = true;
        return {};
      },
      onLog: (fn) => client.setNotificationHandler('notifications/message', (n) => fn(n.params)),
      callWithProgress: (params, fn) => client.callTool(params, { onprogress: fn })
    });
    checkEra(label, era, client, wire);
    await closeAndCheckExit(t, label, client, proc);
  } catch (err) {
    t.ok(`${label}: session`, false, err?.stack ?? err);
  } finally {
    // A no-op after closeAndCheckExit; cleans up after a failed session.
    await client.close().catch(() => {});
  }
}
process.exitCode = t.report();
