# mcpb/mcpb.mk (included by Makefile.am): `make mcpb`, the MCP Bundle
# toolhost-VERSION-linux-ARCH.mcpb (doc/install.md). scripts/mcpb.sh stages
# it and packs it with the MCPB CLI from npm, pinned by
# mcpb/package-lock.json (`npm ci --prefix mcpb`), which configure looks
# for; tests/mcpb/bundle.sh runs `make mcpb-check` into a scratch folder.
MCPB_NAME = toolhost-$(VERSION)-linux-$(host_cpu)
MCPB_PLUGINS = echo add text files prompts skills
MCPB_OUT = $(abs_builddir)
# The sonames the host opens with dlopen() (src/base/dynlib.h), which no
# ldd lists, as configure found them.
MCPB_DLOPEN = `sed -n 's/^\#define TH_[A-Z]*_SONAME "\(.*\)"$$/\1/p' $(top_builddir)/config.h`
MCPB_ENV = TH_MCPB_BIN='$(abs_top_builddir)/src/toolhost-mcpb$(EXEEXT)' \
	TH_MCPB_PLUGINS="`for p in $(MCPB_PLUGINS); do echo '$(abs_top_builddir)'/plugins/.libs/$$p.so; done`" \
	TH_MCPB_DLOPEN="$(MCPB_DLOPEN)" TH_MCPB_VERSION='$(VERSION)' TH_MCPB_ARCH='$(host_cpu)' \
	TH_MCPB_SRCDIR='$(abs_top_srcdir)' TH_MCPB_CLI='$(TH_MCPB_CLI)' NODE='$(NODE)'

.PHONY: mcpb mcpb-bundle mcpb-check mcpb-cli
mcpb: all
	@$(MAKE) $(AM_MAKEFLAGS) mcpb-bundle

mcpb-cli:
	@if test -z '$(TH_MCPB_CLI)' || test -z '$(NODE)'; then \
	  echo "make mcpb: $(TH_MCPB_NOTE); then configure again" >&2; exit 1; \
	fi

# No dependency on `all`: tests/mcpb/bundle.sh runs this during `make
# check`, when the rest is built; the bundle's toolhost is linked here.
mcpb-bundle: mcpb-cli
	@$(MAKE) $(AM_MAKEFLAGS) -C src toolhost-mcpb$(EXEEXT)
	$(MCPB_ENV) $(SHELL) $(top_srcdir)/scripts/mcpb.sh '$(MCPB_OUT)'

# Unpacks the bundle as a client would and runs it from there with an
# empty environment (tests/mcpb/run.mjs).
mcpb-check: mcpb-bundle
	rm -rf '$(MCPB_OUT)/$(MCPB_NAME)-unpacked'
	'$(NODE)' '$(TH_MCPB_CLI)' unpack '$(MCPB_OUT)/$(MCPB_NAME).mcpb' '$(MCPB_OUT)/$(MCPB_NAME)-unpacked'
	'$(NODE)' $(top_srcdir)/tests/mcpb/run.mjs '$(MCPB_OUT)/$(MCPB_NAME)-unpacked' '$(TH_MCPB_CLI)'

clean-local: mcpb-clean
.PHONY: mcpb-clean
mcpb-clean:
	rm -rf toolhost-*-linux-*

EXTRA_DIST += mcpb/mcpb.mk mcpb/package.json mcpb/package-lock.json mcpb/manifest.json.in mcpb/launch.sh \
	scripts/mcpb.sh doc/install.md
