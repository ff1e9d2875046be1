# tests/hostile.mk: hostile and careless test plugins (included by
# tests/Makefile.am), one file each in hostile/, built for `make check` only.
# They are never loaded together: a test copies the ones it needs into a
# private directory (mh_private_dir, mh_hostile in mcp_harness.h).
# Add one as:
#   check_LTLIBRARIES += hostile/NAME.la
#   hostile_NAME_la_SOURCES = hostile/NAME.c
#   hostile_NAME_la_LDFLAGS = $(TEST_MODULE_FLAGS)

check_LTLIBRARIES += hostile/stats.la hostile/setlocale.la
hostile_stats_la_SOURCES = hostile/stats.c
hostile_stats_la_LDFLAGS = $(TEST_MODULE_FLAGS)
hostile_setlocale_la_SOURCES = hostile/setlocale.c
hostile_setlocale_la_LDFLAGS = $(TEST_MODULE_FLAGS)
