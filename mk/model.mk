# mk/model.mk -- the spin model of the native fence's CMP/OS interrupt protocol.
#   make check-model                 all variants (correct must verify, broken must fail)
#   make check-model MODEL_ARGS=-v   also print each broken variant's shortest counterexample
#   make check-model MODEL_ARGS='-DNSIG=3 -DNWAITERS=3'   larger bounds (slower)
# Runs in a temporary directory; leaves no pan files in the tree.  `make test` runs it.
MODEL_ARGS ?=

check-model:
	@if command -v spin >/dev/null 2>&1; then \
		tests/model/check.sh $(MODEL_ARGS); \
	else \
		echo "spin not installed: skipping (scripts/install-deps.sh installs it)"; \
	fi

TEST_DEPS += check-model
