# tests/dynlib.mk: libraries opened on first use (src/base/dynlib.c, the
# libcrypto and libmicrohttpd tables) and the binary not linking them
# (included by tests/Makefile.am).
check_PROGRAMS += test_dynlib
TESTS += test_dynlib
test_dynlib_SOURCES = test_dynlib.c
test_dynlib_CPPFLAGS = $(AM_CPPFLAGS) -DTH_OBJDUMP='"$(OBJDUMP)"'
test_dynlib_CFLAGS = $(AM_CFLAGS) $(CRYPTO_CFLAGS) $(MHD_CFLAGS)
