# mk/hw-broken.mk — deliberately broken builds of the hardware model, each
# linked into its own test binary that must catch it (CONTRIBUTING.md
# "Conventions": tests that can fail).  The way to build one:
#
#   gpu-model/hw/<file>.c compiled again with -DHW_BROKEN_<VARIANT> into
#   $(BUILD)/hw-broken/<variant>/<file>.o, linked before the library (so the
#   archive's own object is never pulled) into tests/test_hw_broken_<variant>,
#   from tests/hw_broken.c (not test_*.c: it would link the real model).
#
# The code says what exactly each variant breaks (grep HW_BROKEN_).  Every
# variant recompiles the same files (HW_BROKEN_SRCS); one that does not name
# the define compiles as it ships.  These objects never enter an archive.  To
# add one: <variant> in HW_BROKEN, a `#ifdef HW_BROKEN_<VARIANT>` in the code,
# and its check in tests/hw_broken.c.

HW_BROKEN_DIR  = $(BUILD)/hw-broken
HW_BROKEN      = log_irq_first log_no_barrier
HW_BROKEN_SRCS = engine logbuf
HW_BROKEN_BINS = $(HW_BROKEN:%=$(BUILD)/tests/test_hw_broken_%)

hw_upper = $(shell echo $(1) | tr a-z A-Z)

define hw_broken_variant
$(HW_BROKEN_DIR)/$(1)/%.o: gpu-model/hw/%.c mk/hw-broken.mk | $(DEPS_STAMP)
	@mkdir -p $$(@D)
	$$(CC) $$(ALL_CFLAGS) -DHW_BROKEN_$(call hw_upper,$(1)) -c $$< -o $$@
$(BUILD)/tests/test_hw_broken_$(1): $(BUILD)/tests/hw_broken.o $(HW_BROKEN_SRCS:%=$(HW_BROKEN_DIR)/$(1)/%.o) $(LIB)
	$$(CC) $$(ALL_LDFLAGS) $$^ -lcmocka $$(LDLIBS_FB) -o $$@
endef
$(foreach v,$(HW_BROKEN),$(eval $(call hw_broken_variant,$(v))))

# `all`, `unit` and `make test` build them; tests/run.sh runs every test_* binary.
TEST_BINS += $(HW_BROKEN_BINS)
