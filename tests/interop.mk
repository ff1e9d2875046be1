# tests/interop.mk: the interop tests (included by tests/Makefile.am): the
# official MCP SDK clients from npm, pinned by interop/package-lock.json,
# spawn the built toolhost with the bundled, conformance, resource and prompt
# test plugins. Install them first with `npm ci --prefix tests/interop`:
# configure runs these tests only when it finds them and Node.js 20 or
# newer, and says so then and here otherwise (--enable-interop-tests, as
# CI configures, makes their absence an error).
if INTEROP_TESTS
TESTS += interop/sdk-v1.mjs interop/client-v2.mjs
TESTS += interop/primitives-v1.mjs interop/primitives-v2.mjs
TESTS += interop/tasks-v1.mjs
TESTS += interop/conformance-2025-11-25.mjs interop/conformance-2026-07-28.mjs
# --otlp-endpoint, decoded by the OpenTelemetry JS packages.
TESTS += interop/otlp.mjs
check_DATA = interop-run
else
check-local: interop-left-out
endif
.PHONY: interop-run interop-left-out
interop-left-out:
	@echo "NOTE: the SDK interop tests and the conformance suite were left out:"
	@echo "NOTE: $(TH_INTEROP_NOTE)."

# NODE is configure's (Node.js >= 20); `make check NODE=/path/to/node` overrides it.
# run.mjs checks the installation, then runs the script under a watchdog.
# Paths into the build tree come from here, so VPATH builds work: the scripts
# and node_modules stay in $(srcdir)/interop.
MJS_LOG_COMPILER = env TOOLHOST='$(abs_top_builddir)/src/toolhost' XDG_CACHE_HOME='$(abs_builddir)/interop-cache-home' \
	TOOLHOST_PLUGIN_DIRS='$(abs_top_builddir)/plugins/.libs:$(abs_builddir)/conformance/.libs' \
	TOOLHOST_TEST_PLUGIN_DIRS='$(abs_builddir)/resplugins/.libs:$(abs_builddir)/promptplugins/.libs' \
	$(NODE) interop-run/run.mjs

# Node resolves packages from a script's own folder upwards and ignores
# NODE_PATH for modules, and a distcheck source tree is read-only and has no
# node_modules. So the scripts run from a copy in the build tree, next to a
# link to the first node_modules found: in the build tree, in the source
# tree, then $(TH_NODE_MODULES) (from configure or the environment).
interop_mjs = interop/run.mjs interop/common.mjs interop/sdk-v1.mjs interop/client-v2.mjs \
	interop/conformance.mjs interop/conformance-2025-11-25.mjs interop/conformance-2026-07-28.mjs \
	interop/primitives.mjs interop/primitives-v1.mjs interop/primitives-v2.mjs interop/tasks-v1.mjs \
	interop/otlp.mjs
interop-run:
	@rm -rf interop-run && $(MKDIR_P) interop-run
	@for f in $(interop_mjs); do cp $(srcdir)/$$f interop-run/ || exit 1; done
	@for d in '$(abs_builddir)/interop/node_modules' '$(abs_srcdir)/interop/node_modules' '$(TH_NODE_MODULES)'; do \
	  if test -n "$$d" && test -d "$$d"; then ln -s "$$d" interop-run/node_modules; break; fi; \
	done

clean-local:
	rm -rf interop-run interop-cache-home

EXTRA_DIST += interop/package.json interop/package-lock.json $(interop_mjs) \
	interop/node/package.json interop/node/package-lock.json
