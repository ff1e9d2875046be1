# tests/packaging.mk: packaging and documentation:
# toolhost-plugin(3) against plugin.h, the README's client configuration
# snippets, the binary's .note.dlopen, and the Debian package build. The
# last runs when configure found dpkg-buildpackage, dh and a git checkout; otherwise `make check`
# says it was left out. CI installs debhelper (scripts/deps-debian.sh
# --test) and runs from a clone, so it runs there.
TESTS += packaging/man-plugin.sh packaging/client-config.sh
# The binary's .note.dlopen, and a host without libmicrohttpd.
TESTS += packaging/dlopen-note.sh
if PACKAGE_TESTS
TESTS += packaging/deb.sh
else
check-local: packaging-left-out
endif
.PHONY: packaging-left-out
packaging-left-out:
	@echo "NOTE: the Debian packaging test (packaging/deb.sh) was left out: it needs dpkg-buildpackage"
	@echo "NOTE: and dh (scripts/deps-debian.sh --package) and a git checkout as the source tree,"
	@echo "NOTE: and is off with --disable-package-tests (as in debian/rules)."
EXTRA_DIST += packaging.mk packaging/deb.sh packaging/man-plugin.sh packaging/client-config.sh packaging/mcpconfig.c \
	packaging/dlopen-note.sh
