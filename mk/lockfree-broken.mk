# mk/lockfree-broken.mk — deliberately broken lock-free variants, linked into
# the tests that must catch them (CONTRIBUTING.md "Conventions": tests that
# can fail; "Adding a lock-free structure").  The one way to build a broken variant:
#
#   lockfree/<thing>.c compiled again with -DLF_<THING>_BROKEN and its external
#   functions renamed by -D (lf_<thing>_foo -> lf_<thing>_broken_foo) into
#   $(BUILD)/lockfree-broken/<thing>.o, linked beside the library into
#   tests/test_lf_<thing>, which declares the renamed prototypes.
#
# The headers say what exactly each broken variant breaks.  The renaming lets
# the broken object and the real one (from liblockfree.a) link into the same
# test binary.  These objects never enter an archive.  To add one: a line
# LF_BROKEN_RENAME_<thing> below and <thing> in LF_BROKEN.

LF_BROKEN_DIR = $(BUILD)/lockfree-broken
LF_BROKEN     = ring event htab waitset mpsc

# -Dlf_<prefix><name>=lf_<prefix>broken_<name> for each name: $(call lf_broken_rename,prefix_,names)
lf_broken_rename = $(foreach n,$(2),-Dlf_$(1)$(n)=lf_$(1)broken_$(n))

LF_BROKEN_RENAME_ring    = $(call lf_broken_rename,ring_,create create_split control_bytes destroy push_spsc \
                             push_n_spsc pop_spsc peek_spsc size write_index read_index capacity slot_size)
LF_BROKEN_RENAME_event   = $(call lf_broken_rename,event_,init set reset is_set has_sleepers wait wait_any test_window_hook) \
                           $(call lf_broken_rename,wake_,init prepare cancel park notify parker_waiting) \
                           $(call lf_broken_rename,futex_,syscalls wait_until wake)
LF_BROKEN_RENAME_htab    = $(call lf_broken_rename,htab_,thread_online thread_offline read_lock read_unlock \
                             barrier create destroy new_key insert lookup remove count)
LF_BROKEN_RENAME_waitset = $(call lf_broken_rename,waitset_,init destroy add cancel release release_before threshold empty \
                             signal_needs_release unsettled test_hook)
LF_BROKEN_RENAME_mpsc    = $(call lf_broken_rename,mpsc_,init destroy push pop empty)

lf_upper = $(shell echo $(1) | tr a-z A-Z)

$(LF_BROKEN_DIR)/%.o: lockfree/%.c mk/lockfree-broken.mk | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DLF_$(call lf_upper,$*)_BROKEN $(LF_BROKEN_RENAME_$*) -c $< -o $@

# Each test links its broken object beside the library (objects first, so
# the library resolves what both need); otherwise the Makefile's test rule.
$(foreach t,$(LF_BROKEN),$(BUILD)/tests/test_lf_$(t)): $(BUILD)/tests/test_lf_%: $(BUILD)/tests/test_lf_%.o \
		$(LF_BROKEN_DIR)/%.o $(LIB)
	$(CC) $(ALL_LDFLAGS) $^ -lcmocka $(LDLIBS_FB) -o $@
