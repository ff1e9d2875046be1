// tests/interop/run.mjs: the LOG_COMPILER of the interop tests
// (tests/interop.mk): `node run.mjs SCRIPT.mjs`. Fails, never skips, when the
// pinned SDKs are not installed or Node is too old, then runs SCRIPT under a
// watchdog so a hung server fails the test instead of stalling `make check`.
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const fail = (msg) => {
  console.error(`interop: ${msg}`);
  console.log('0 passed, 1 failed');
  process.exit(1);
};

const major = Number(process.versions.node.split('.')[0]);
if (major < 20) fail(`Node.js ${process.versions.node} is too old: the MCP SDKs need Node.js 20 or newer`);

// The majors the scripts are written against; package-lock.json pins the rest.
const wanted = { '@modelcontextprotocol/sdk': 1, '@modelcontextprotocol/client': 2, '@opentelemetry/otlp-transformer': 0 };
for (const [name, wantMajor] of Object.entries(wanted)) {
  const manifest = join(here, 'node_modules', name, 'package.json');
  if (!existsSync(manifest))
    fail(`${name} is not installed in ${join(here, 'node_modules')}; run \`npm ci --prefix tests/interop\` ` +
         'in the source tree, set TH_NODE_MODULES to a node_modules folder, or configure --disable-interop-tests');
  const { version } = JSON.parse(readFileSync(manifest, 'utf8'));
  if (Number(version.split('.')[0]) !== wantMajor)
    fail(`${name} ${version} is installed, but ${wantMajor}.x is pinned; run \`npm ci --prefix tests/interop\``);
  console.log(`interop: ${name} ${version}, Node.js ${process.versions.node}`);
}

const script = process.argv[2];
if (!script) fail('usage: node run.mjs SCRIPT.mjs');

// Generous: a full run takes a few seconds; this only catches a hang.
const WATCHDOG_MS = 120 * 1000;
setTimeout(() => fail(`${script} did not finish within ${WATCHDOG_MS / 1000} s`), WATCHDOG_MS).unref();

// tests/interop.mk copies the scripts next to this file (interop-run/),
// where their node_modules is: run that copy of SCRIPT.
await import(pathToFileURL(join(here, basename(script))).href);
