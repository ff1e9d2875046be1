# tests/mcpb.mk: the MCP Bundle (included by tests/Makefile.am). bundle.sh
# builds it with `make mcpb-check` (mcpb/mcpb.mk) into a scratch folder,
# where it is validated, packed, unpacked and run from the unpacked copy
# with an empty environment (mcpb/run.mjs). It runs when configure found
# the MCPB CLI and Node.js; otherwise `make check` says it was left out
# (--enable-mcpb-tests, as CI configures, makes their absence an error).
if MCPB_TESTS
TESTS += mcpb/bundle.sh
else
check-local: mcpb-left-out
endif
.PHONY: mcpb-left-out
mcpb-left-out:
	@echo "NOTE: the MCP Bundle test (mcpb/bundle.sh) was left out: $(TH_MCPB_NOTE)."
EXTRA_DIST += mcpb.mk mcpb/bundle.sh mcpb/run.mjs
