// tests/interop/conformance-2025-11-25.mjs: the official conformance suite's
// --requirements 2025-11-25 against toolhost over HTTP (see conformance.mjs).
import { runConformance } from './conformance.mjs';

await runConformance('2025-11-25', [
  'server-initialize', 'logging-set-level', 'ping', 'tools-list', 'tools-call-simple-text', 'tools-call-image',
  'tools-call-audio', 'tools-call-embedded-resource', 'tools-call-mixed-content', 'tools-call-with-logging',
  'tools-call-error', 'tools-call-with-progress', 'server-sse-multiple-streams', 'dns-rebinding-protection',
  'server-session-lifecycle', 'json-schema-2020-12', 'server-sse-polling'
]);
