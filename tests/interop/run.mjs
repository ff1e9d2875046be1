// tests/interop/run.mjs: the LOG_COMPILER of the interop tests
// (tests/interop.mk): `node run.mjs SCRIPT.mjs`. Fails, never skips, when the
// pinned SDKs are not installed or Node is too old, then runs SCRIPT under a
// watchdog so a hung server fails the test instead of stalling `make check`.
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const fail = (msg) => {
  console.error(`interop: ${msg}`);
  console.log('0 passed, 1 failed');
  process.exit(1);
};

const major = Number(process.versions.node.split('.')[0]);
if (major < 20) fail(`Node.js ${process.versions.node} is too old: the MCP SDKs need Node.js 20 or newer`);

// The SDKs live in node_modules next to this file, or, when the source tree
// has none (`make distcheck` unpacks a tarball without it), in
// TH_INTEROP_MODULES (configure's INTEROP_MODULES): the checkout's.
const ownModules = join(here, 'node_modules');
const modules = existsSync(ownModules) || !process.env.TH_INTEROP_MODULES ? ownModules : process.env.TH_INTEROP_MODULES;

// The majors the scripts are written against; package-lock.json pins the rest.
const wanted = { '@modelcontextprotocol/sdk': 1, '@modelcontextprotocol/client': 2 };
for (const [name, wantMajor] of Object.entries(wanted)) {
  const manifest = join(modules, name, 'package.json');
  if (!existsSync(manifest))
    fail(`${name} is not installed in ${modules}; run \`npm ci --prefix tests/interop\` from the source tree`);
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

// Imports resolve from the importing file's directory: with modules from
// elsewhere, run copies of the scripts from a directory (in the build tree,
// one per script, as tests may run in parallel) that links to them.
let entry = resolve(script);
if (modules !== ownModules) {
  const run = resolve('interop-run', basename(script, '.mjs'));
  rmSync(run, { recursive: true, force: true });
  mkdirSync(run, { recursive: true });
  symlinkSync(modules, join(run, 'node_modules'));
  for (const f of readdirSync(dirname(entry)).filter((f) => f.endsWith('.mjs')))
    copyFileSync(join(dirname(entry), f), join(run, f));
  entry = join(run, basename(entry));
}
await import(pathToFileURL(entry).href);
