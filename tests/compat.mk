# tests/compat.mk: unit tests of src/base/compat.c and src/plugin/dirpoll.c
# (included by tests/Makefile.am). In a --disable-linux-extensions build
# they test the POSIX fallbacks, in a default Linux build the Linux calls.
check_PROGRAMS += test_compat
TESTS += test_compat
test_compat_SOURCES = test_compat.c
