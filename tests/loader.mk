# tests/loader.mk: the loader tests (included by tests/Makefile.am) and the
# plugins they load. Each plugin is a libtool module, so make check leaves it
# at tests/plugins/.libs/NAME.so, where test_loader copies it from.
check_PROGRAMS += test_loader
TESTS += test_loader
test_loader_SOURCES = test_loader.c

check_LTLIBRARIES += plugins/good.la plugins/noentry.la plugins/nulldesc.la \
	plugins/addMemory.la plugins/mismatch.la plugins/dup_a.la plugins/dup_b.la \
	plugins/abi.la plugins/three.la plugins/refused.la \
	plugins/selfdup.la plugins/stackdesc.la plugins/staged.la \
	plugins/whereami.la
plugins_good_la_SOURCES = plugins/good.c
plugins_good_la_LDFLAGS = $(TEST_MODULE_FLAGS)
plugins_noentry_la_SOURCES = plugins/noentry.c
plugins_noentry_la_LDFLAGS = $(TEST_MODULE_FLAGS)
plugins_nulldesc_la_SOURCES = plugins/nulldesc.c
plugins_nulldesc_la_LDFLAGS = $(TEST_MODULE_FLAGS)
plugins_addMemory_la_SOURCES = plugins/addMemory.c
plugins_addMemory_la_LDFLAGS = $(TEST_MODULE_FLAGS)
plugins_mismatch_la_SOURCES = plugins/mismatch.c
plugins_mismatch_la_LDFLAGS = $(TEST_MODULE_FLAGS)
plugins_dup_a_la_SOURCES = plugins/dup_a.c
plugins_dup_a_la_LDFLAGS = $(TEST_MODULE_FLAGS)
plugins_dup_b_la_SOURCES = plugins/dup_b.c
plugins_dup_b_la_LDFLAGS = $(TEST_MODULE_FLAGS)
plugins_abi_la_SOURCES = plugins/abi.c
plugins_abi_la_LDFLAGS = $(TEST_MODULE_FLAGS)
plugins_three_la_SOURCES = plugins/three.c
plugins_three_la_LDFLAGS = $(TEST_MODULE_FLAGS)
plugins_refused_la_SOURCES = plugins/refused.c
plugins_refused_la_LDFLAGS = $(TEST_MODULE_FLAGS)
plugins_selfdup_la_SOURCES = plugins/selfdup.c
plugins_selfdup_la_LDFLAGS = $(TEST_MODULE_FLAGS)
plugins_stackdesc_la_SOURCES = plugins/stackdesc.c
plugins_stackdesc_la_LDFLAGS = $(TEST_MODULE_FLAGS)
plugins_staged_la_SOURCES = plugins/staged.c
plugins_staged_la_LDFLAGS = $(TEST_MODULE_FLAGS)
plugins_whereami_la_SOURCES = plugins/whereami.c
plugins_whereami_la_LDFLAGS = $(TEST_MODULE_FLAGS)

# Hostile plugins (tests/hostile.mk) for the loading rules.
check_LTLIBRARIES += hostile/aa.la hostile/chdir_root.la
hostile_aa_la_SOURCES = hostile/aa.c
hostile_aa_la_LDFLAGS = $(TEST_MODULE_FLAGS)
hostile_chdir_root_la_SOURCES = hostile/chdir_root.c
hostile_chdir_root_la_LDFLAGS = $(TEST_MODULE_FLAGS)

# The loading rules as the toolhost binary applies them.
check_PROGRAMS += test_loader_host
TESTS += test_loader_host
test_loader_host_SOURCES = test_loader_host.c $(MCP_HARNESS)
