# mk/fuzz.mk — the libFuzzer harness of the command-line parsers (tests/fuzz/).
#
#   make fuzz-cli          build $(BUILD)/fuzz/fuzz_cli and run it briefly (part of `make test`)
#   make fuzz-cli FUZZ_TIME=600 FUZZ_RUNS=-1   a long session
#
# Built with clang straight from the parser sources (no library: the parsers
# do no I/O), with ASan and UBSan.  The working corpus lives in
# $(BUILD)/fuzz/corpus-cli, seeded from tests/fuzz/corpus/cli (which libFuzzer
# never writes); crash inputs land in $(BUILD)/fuzz/.  Without clang the step
# is skipped with a message, not failed.

FUZZ_CC   ?= clang
FUZZ_RUNS ?= 20000
FUZZ_TIME ?= 5
FUZZ_CLI_SRCS = tests/fuzz/fuzz_cli.c src/fb_cli.c src/fb_grid.c src/fb_util.c src/fb_scenario.c lockfree/die.c
FUZZ_CLI_HDRS = src/fb_cli.h src/fb_grid.h src/fb_util.h src/fb_scenario.h src/fb_limits.h lockfree/die.h
FUZZ_CLI      = $(BUILD)/fuzz/fuzz_cli
FUZZ_CFLAGS   = -std=gnu11 -g -O1 -Wall -Wextra -Werror -Wno-unused-parameter -D_GNU_SOURCE -I. \
                -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer

.PHONY: fuzz-cli
TEST_DEPS += fuzz-cli

$(FUZZ_CLI): $(FUZZ_CLI_SRCS) $(FUZZ_CLI_HDRS)
	@mkdir -p $(@D)
	@if command -v $(FUZZ_CC) >/dev/null 2>&1; then \
	   echo "$(FUZZ_CC) ... -fsanitize=fuzzer,address,undefined $(FUZZ_CLI_SRCS) -o $@"; \
	   $(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_CLI_SRCS) -lm -o $@; \
	 else rm -f $@; fi

fuzz-cli: $(FUZZ_CLI)
	@if [ ! -x $(FUZZ_CLI) ]; then \
	   echo "fuzz: skipped: $(FUZZ_CC) not found (the clang package provides libFuzzer)"; \
	 else \
	   mkdir -p $(BUILD)/fuzz/corpus-cli && \
	   $(FUZZ_CLI) -runs=$(FUZZ_RUNS) -max_total_time=$(FUZZ_TIME) -timeout=10 -rss_limit_mb=2048 \
	     -artifact_prefix=$(BUILD)/fuzz/ $(BUILD)/fuzz/corpus-cli tests/fuzz/corpus/cli \
	     > $(BUILD)/fuzz/fuzz_cli.log 2>&1; rc=$$?; \
	   if [ $$rc -ne 0 ]; then tail -n 40 $(BUILD)/fuzz/fuzz_cli.log; \
	     echo "fuzz: fuzz_cli FAILED (exit $$rc): reproduce with $(FUZZ_CLI) $(BUILD)/fuzz/crash-*"; exit 1; fi; \
	   echo "fuzz: fuzz_cli ok: $$(grep -Eo '^Done [0-9]+ runs in [0-9]+ second' $(BUILD)/fuzz/fuzz_cli.log | tail -n1)s, no crash"; \
	 fi
