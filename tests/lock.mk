# tests/lock.mk: pinned definitions (included by tests/Makefile.am): toolhost
# lock writes and checks a lock file, and toolhost --lock serves only what it
# pins, at start-up and on reload. lockplugins/pin.c is built once per kind
# of drift; steady.c never changes.
check_PROGRAMS += test_lock
TESTS += test_lock
test_lock_SOURCES = test_lock.c $(MCP_HARNESS)

check_LTLIBRARIES += lockplugins/base/pin.la lockplugins/desc/pin.la lockplugins/schema/pin.la lockplugins/annot/pin.la lockplugins/newtool/pin.la lockplugins/nomore/pin.la lockplugins/prompt/pin.la lockplugins/rebuild/pin.la lockplugins/steady.la
lockplugins_base_pin_la_SOURCES = lockplugins/pin.c
lockplugins_base_pin_la_LDFLAGS = $(TEST_MODULE_FLAGS)
lockplugins_desc_pin_la_SOURCES = lockplugins/pin.c
lockplugins_desc_pin_la_CPPFLAGS = $(AM_CPPFLAGS) -DPIN_DESC
lockplugins_desc_pin_la_LDFLAGS = $(TEST_MODULE_FLAGS)
lockplugins_schema_pin_la_SOURCES = lockplugins/pin.c
lockplugins_schema_pin_la_CPPFLAGS = $(AM_CPPFLAGS) -DPIN_SCHEMA
lockplugins_schema_pin_la_LDFLAGS = $(TEST_MODULE_FLAGS)
lockplugins_annot_pin_la_SOURCES = lockplugins/pin.c
lockplugins_annot_pin_la_CPPFLAGS = $(AM_CPPFLAGS) -DPIN_ANNOT
lockplugins_annot_pin_la_LDFLAGS = $(TEST_MODULE_FLAGS)
lockplugins_newtool_pin_la_SOURCES = lockplugins/pin.c
lockplugins_newtool_pin_la_CPPFLAGS = $(AM_CPPFLAGS) -DPIN_NEW_TOOL
lockplugins_newtool_pin_la_LDFLAGS = $(TEST_MODULE_FLAGS)
lockplugins_nomore_pin_la_SOURCES = lockplugins/pin.c
lockplugins_nomore_pin_la_CPPFLAGS = $(AM_CPPFLAGS) -DPIN_NO_MORE
lockplugins_nomore_pin_la_LDFLAGS = $(TEST_MODULE_FLAGS)
lockplugins_prompt_pin_la_SOURCES = lockplugins/pin.c
lockplugins_prompt_pin_la_CPPFLAGS = $(AM_CPPFLAGS) -DPIN_PROMPT
lockplugins_prompt_pin_la_LDFLAGS = $(TEST_MODULE_FLAGS)
lockplugins_rebuild_pin_la_SOURCES = lockplugins/pin.c
lockplugins_rebuild_pin_la_CPPFLAGS = $(AM_CPPFLAGS) -DPIN_REBUILD
lockplugins_rebuild_pin_la_LDFLAGS = $(TEST_MODULE_FLAGS)
lockplugins_steady_la_SOURCES = lockplugins/steady.c
lockplugins_steady_la_LDFLAGS = $(TEST_MODULE_FLAGS)
EXTRA_DIST += lock.mk
