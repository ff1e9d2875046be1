# tests/interop.mk: the interop tests (included by tests/Makefile.am): the
# official MCP SDK clients from npm, pinned by interop/package-lock.json,
# spawn the built toolhost with the bundled and conformance plugins. Install
# them first with `npm ci --prefix tests/interop`; without them the tests
# fail (run.mjs says so), they never skip.
# Automake wants TEST_EXTENSIONS set with '=' once; should another fragment
# need an extension, this line moves to tests/Makefile.am.
TEST_EXTENSIONS = .mjs
TESTS += interop/sdk-v1.mjs interop/client-v2.mjs
# The official conformance suite over HTTP (interop/conformance.mjs says
# which scenarios are not served yet); it runs on the Node.js 22 that the
# same lock file pins, and needs no network once `npm ci` ran.
TESTS += interop/conformance-2025-11-25.mjs interop/conformance-2026-07-28.mjs

# Override with `make check NODE=/path/to/node`; the SDKs need Node.js >= 20.
NODE = node
# run.mjs checks the installation, then runs the script under a watchdog.
# Paths into the build tree come from here, so VPATH builds work: the scripts
# and node_modules stay in $(srcdir)/interop.
MJS_LOG_COMPILER = env TOOLHOST='$(abs_top_builddir)/src/toolhost' \
	TOOLHOST_PLUGIN_DIRS='$(abs_top_builddir)/plugins/.libs:$(abs_builddir)/conformance/.libs' \
	$(NODE) $(srcdir)/interop/run.mjs

EXTRA_DIST += interop/package.json interop/package-lock.json \
	interop/run.mjs interop/common.mjs interop/sdk-v1.mjs interop/client-v2.mjs \
	interop/conformance.mjs interop/conformance-2025-11-25.mjs interop/conformance-2026-07-28.mjs
