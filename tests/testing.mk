# tests/testing.mk: the test kit for plugin authors (src/testing/,
# toolhost/testing.h), tested as an author uses it: linked against the
# library alone, loading kit.so, the bundled plugins and the loader's test
# plugins, in both isolation modes. Workers run the toolhost just built.
check_PROGRAMS += test_testing
TESTS += test_testing
test_testing_SOURCES = test_testing.c
test_testing_LDADD = $(top_builddir)/src/libtoolhost-testing.la $(CHECK_LIBS) $(JSONC_LIBS)
check_LTLIBRARIES += kitplugins/kit.la
kitplugins_kit_la_SOURCES = kitplugins/kit.c
kitplugins_kit_la_LDFLAGS = $(TEST_MODULE_FLAGS)

# The bundled plugins tested with the kit, as an author would test them:
# add and text (test_typed_plugins), echo, files, prompts and skills.
check_PROGRAMS += test_typed_plugins test_bundled_plugins
TESTS += test_typed_plugins test_bundled_plugins
test_typed_plugins_SOURCES = test_typed_plugins.c
test_typed_plugins_LDADD = $(test_testing_LDADD)
test_bundled_plugins_SOURCES = test_bundled_plugins.c
test_bundled_plugins_LDADD = $(test_testing_LDADD)
EXTRA_DIST += testing.mk
