# tests/cache.mk: the registry cache (included by tests/Makefile.am): warm
# starts skip the scan of unchanged plugins; a change, a corrupt file or
# --no-registry-cache means a scan. Its plugin is hostile/ctor_mark.
check_PROGRAMS += test_cache
TESTS += test_cache
test_cache_SOURCES = test_cache.c $(MCP_HARNESS)
# --lazy-load's registration and first-call checks (unit test).
check_PROGRAMS += test_lazy
TESTS += test_lazy
test_lazy_SOURCES = test_lazy.c
EXTRA_DIST += cache.mk

# tools/list pages serialised once per registry version (unit test).
check_PROGRAMS += test_tools_list
TESTS += test_tools_list
test_tools_list_SOURCES = test_tools_list.c
