# mk/man.mk — the manual page and the reference check, both from the binary itself.
#
#   make                  also builds $(BUILD)/fencebench.1 (scripts/man.py: the
#                         binary's --help, help COMMAND, list and help SCENARIO)
#   make check-docs       also runs scripts/check-reference.py: every command,
#                         option and scenario the binary knows is in the manual
#                         page and in the user's documents (README.md, docs/)
#
# tests/test_docs runs check-reference on this tree and on planted ones.

MANPAGE = $(BUILD)/fencebench.1

all: $(if $(wildcard $(MAIN_SRC)),$(MANPAGE))

$(MANPAGE): $(FENCEBENCH) scripts/man.py $(wildcard benchmarks/profiles/*.json)
	$(PYTHON) scripts/man.py $(FENCEBENCH) > $@.tmp && mv $@.tmp $@

.PHONY: check-reference
check-docs: check-reference
check-reference: $(MANPAGE)
	@$(PYTHON) scripts/check-reference.py $(FENCEBENCH) $(MANPAGE) .

$(BUILD)/tests/test_docs: | $(MANPAGE)
