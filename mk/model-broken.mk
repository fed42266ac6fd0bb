# mk/model-broken.mk — deliberately broken builds of the GPU model (the
# hardware, the OS, the runtime's validation layer), each linked into a test binary
# of its own that must catch it (CONTRIBUTING.md "Conventions": tests that
# can fail).  The way to build one, variant <v>:
#
#   the files MB_SRCS_<v> compiled again with -D$(MB_DEFINE_<v>) into
#   $(BUILD)/model-broken/<v>/, with tests/model_broken.c (which picks the
#   check of that define), linked before the library (so the archive's own
#   objects are never pulled) into tests/test_broken_<v>.  tests/model_broken.c
#   is not test_*.c: alone it would link the real model.
#
# The code says what exactly each variant breaks (grep the define).  These
# objects never enter an archive.  To add one: <v> in MODEL_BROKEN, its
# MB_DEFINE_<v> and MB_SRCS_<v>, an #ifdef of the define in the real code
# path, and its check in tests/model_broken.c.

MB_DIR       = $(BUILD)/model-broken
MODEL_BROKEN = log_irq_first log_no_barrier no_reset_check update_unsynchronized

MB_DEFINE_log_irq_first  = HW_BROKEN_LOG_IRQ_FIRST
MB_SRCS_log_irq_first    = gpu-model/hw/engine.c gpu-model/hw/logbuf.c
MB_DEFINE_log_no_barrier = HW_BROKEN_LOG_NO_BARRIER
MB_SRCS_log_no_barrier   = gpu-model/hw/engine.c gpu-model/hw/logbuf.c
MB_DEFINE_no_reset_check = RT_BROKEN_NO_RESET_CHECK
MB_SRCS_no_reset_check   = gpu-model/runtime/d3d_debug.c
MB_DEFINE_update_unsynchronized = OS_BROKEN_UPDATE_UNSYNCHRONIZED
MB_SRCS_update_unsynchronized   = gpu-model/os/fence.c

define mb_variant
$(MB_DIR)/$(1)/%.o: %.c mk/model-broken.mk | $(DEPS_STAMP)
	@mkdir -p $$(@D)
	$$(CC) $$(ALL_CFLAGS) -D$(MB_DEFINE_$(1)) -c $$< -o $$@
$(BUILD)/tests/test_broken_$(1): $(MB_DIR)/$(1)/tests/model_broken.o $(MB_SRCS_$(1):%.c=$(MB_DIR)/$(1)/%.o) $(LIB)
	$$(CC) $$(ALL_LDFLAGS) $$^ -lcmocka $$(LDLIBS_FB) -o $$@
endef
$(foreach v,$(MODEL_BROKEN),$(eval $(call mb_variant,$(v))))

# `all`, `unit` and `make test` build them; tests/run.sh runs every test_* binary.
TEST_BINS += $(MODEL_BROKEN:%=$(BUILD)/tests/test_broken_%)
