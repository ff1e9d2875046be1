# tests/authors.mk: tests of what plugin authors, packagers and operators
# use: the install layout, the README's examples, and the
# inspect, call, test and new-plugin subcommands, new-plugin's own tests
# included. Shell tests live in authors/.
TESTS += authors/install-layout.sh authors/readme-examples.sh authors/inspect.sh authors/call.sh authors/new-plugin.sh \
	authors/registry-rules.sh authors/licence.sh authors/include-graph.sh authors/transport-envelope.sh authors/ttest.sh \
	authors/scaffold-check.sh
SH_LOG_COMPILER = env TOP_BUILDDIR='$(abs_top_builddir)' TOP_SRCDIR='$(abs_top_srcdir)' MAKE='$(MAKE)' \
	TOOLHOST='$(abs_top_builddir)/src/toolhost' PLUGINS='$(abs_top_builddir)/plugins/.libs' \
	HOSTILE='$(abs_builddir)/hostile/.libs' TESTPLUGINS='$(abs_builddir)/plugins/.libs' CC='$(CC)' \
	prefix='$(prefix)' libdir='$(libdir)' plugindir='$(plugindir)' includedir='$(includedir)' \
	bindir='$(bindir)' mandir='$(mandir)' datadir='$(datadir)' NGINX='$(NGINX)' \
	systemdsystemunitdir='$(systemdsystemunitdir)' systemduserunitdir='$(systemduserunitdir)' $(SHELL)
EXTRA_DIST += authors.mk authors/install-layout.sh authors/readme-examples.sh authors/inspect.sh \
	authors/call.sh authors/new-plugin.sh authors/registry-rules.sh authors/licence.sh \
	authors/include-graph.sh authors/transport-envelope.sh authors/ttest.sh authors/scaffold-check.sh
check_PROGRAMS += test_server_info
TESTS += test_server_info
test_server_info_SOURCES = test_server_info.c $(MCP_HARNESS)
# The log format, per-call lines, the protocol trace (test_logs).
check_PROGRAMS += test_logs
TESTS += test_logs
test_logs_SOURCES = test_logs.c $(MCP_HARNESS)
# Plugin settings from --set, the environment and --config (test_settings).
check_PROGRAMS += test_settings
TESTS += test_settings
test_settings_SOURCES = test_settings.c $(MCP_HARNESS)
# base/log.c alone: text and JSON lines, relaying, raising (test_log_format).
check_PROGRAMS += test_log_format
TESTS += test_log_format
test_log_format_SOURCES = test_log_format.c
# The option table against doc/toolhost.1, --help and the defaults (test_options).
check_PROGRAMS += test_options
TESTS += test_options
test_options_SOURCES = test_options.c
# What the host shows at the door: a notice for a terminal on stdin, public
# HTTP without auth refused before plugins load, a quiet end of input (test_host).
check_PROGRAMS += test_host
TESTS += test_host
test_host_SOURCES = test_host.c $(MCP_HARNESS)
# README.md and doc/*.md: links, runnable blocks, options, the bench chart.
TESTS += authors/docs.sh
EXTRA_DIST += authors/docs.sh
