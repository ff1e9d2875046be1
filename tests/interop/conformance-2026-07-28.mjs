// tests/interop/conformance-2026-07-28.mjs: the official conformance suite's
// --requirements 2026-07-28 against toolhost over HTTP (see conformance.mjs).
import { runConformance } from './conformance.mjs';

await runConformance('2026-07-28', [
  'server-stateless', 'tools-list', 'tools-call-simple-text', 'tools-call-image', 'tools-call-audio',
  'tools-call-embedded-resource', 'tools-call-mixed-content', 'tools-call-error', 'tools-call-with-progress',
  'server-sse-multiple-streams', 'sep-2164-resource-not-found', 'dns-rebinding-protection', 'caching',
  'json-schema-2020-12', 'http-header-validation', 'http-custom-header-server-validation'
]);
