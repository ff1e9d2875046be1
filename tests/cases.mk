# tests/cases.mk: the bundled plugins' documented behaviour, errors included,
# as a `toolhost test` cases file, plugins.cases.json (included by
# tests/Makefile.am): the subcommand's own use, each case a TAP point read
# by Automake's TAP driver.
TESTS += plugins-cases.test
TEST_LOG_DRIVER = env AM_TAP_AWK='$(AWK)' $(SHELL) $(top_srcdir)/build-aux/tap-driver.sh
TEST_LOG_COMPILER = env TOOLHOST='$(abs_top_builddir)/src/toolhost' PLUGINS='$(abs_top_builddir)/plugins/.libs' \
	CASES='$(abs_srcdir)/plugins.cases.json' TOP_SRCDIR='$(abs_top_srcdir)' $(SHELL)
EXTRA_DIST += cases.mk plugins-cases.test plugins.cases.json
