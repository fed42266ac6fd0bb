# mk/docs.mk — a clone refers only to what it holds (CONTRIBUTING.md "Documents").
#
#   make check-docs    scripts/check-docs.py on this tree (part of `make test`), then
#                      scripts/run-docs.py: every `sh` block of README.md and docs/,
#                      shortened (mk/man.mk adds the reference check)
#
# tests/test_docs runs the script of this tree with this PYTHON on the tree and
# on fake trees with a planted bad reference: the Makefile's compile rule, plus
# the paths.

.PHONY: check-docs
TEST_DEPS += check-docs

check-docs: $(if $(wildcard $(MAIN_SRC)),$(FENCEBENCH))
	@$(PYTHON) scripts/check-docs.py
	@$(PYTHON) scripts/run-docs.py

$(BUILD)/tests/test_docs.o: tests/test_docs.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DFB_DOCS_SCRIPT='"$(CURDIR)/scripts/check-docs.py"' -DFB_SOURCE_ROOT='"$(CURDIR)"' \
	  -DFB_REFERENCE_SCRIPT='"$(CURDIR)/scripts/check-reference.py"' \
	  -DFB_RUN_DOCS_SCRIPT='"$(CURDIR)/scripts/run-docs.py"' \
	  -DFB_DOCS_PYTHON='"$(PYTHON)"' -c $< -o $@
