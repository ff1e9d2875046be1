# tests/reload.mk: hot reload (included by tests/Makefile.am): plugins added,
# replaced (also under a running call), broken and removed under --watch,
# SIGHUP rescans, and the notifications both eras receive, in both isolation
# modes. reloadplugins/flip.c is built as three versions of flip.so.
check_PROGRAMS += test_reload
TESTS += test_reload
test_reload_SOURCES = test_reload.c $(MCP_HARNESS)
# The swap, notifications, borrowed tools and subscription table as units.
check_PROGRAMS += test_hot_swap
TESTS += test_hot_swap
test_hot_swap_SOURCES = test_hot_swap.c

check_LTLIBRARIES += reloadplugins/v1/flip.la reloadplugins/v2/flip.la reloadplugins/bad/flip.la
reloadplugins_v1_flip_la_SOURCES = reloadplugins/flip.c
reloadplugins_v1_flip_la_CPPFLAGS = $(AM_CPPFLAGS) -DFLIP_VERSION=1
reloadplugins_v1_flip_la_LDFLAGS = $(TEST_MODULE_FLAGS)
reloadplugins_v2_flip_la_SOURCES = reloadplugins/flip.c
reloadplugins_v2_flip_la_CPPFLAGS = $(AM_CPPFLAGS) -DFLIP_VERSION=2
reloadplugins_v2_flip_la_LDFLAGS = $(TEST_MODULE_FLAGS)
reloadplugins_bad_flip_la_SOURCES = reloadplugins/flip.c
reloadplugins_bad_flip_la_CPPFLAGS = $(AM_CPPFLAGS) -DFLIP_VERSION=3 -DFLIP_BAD
reloadplugins_bad_flip_la_LDFLAGS = $(TEST_MODULE_FLAGS)
EXTRA_DIST += reload.mk
