# mk/lockfree-broken.mk — deliberately broken lock-free variants, linked into
# the tests that must catch them (STYLE.md habit 8, CONTRIBUTING "Adding a
# lock-free structure").
#
# lockfree/ring.c  with -DLF_RING_BROKEN  -> $(BUILD)/lockfree-broken/ring.o,  symbols lf_ring_broken_*
# lockfree/event.c with -DLF_EVENT_BROKEN -> $(BUILD)/lockfree-broken/event.o, symbols lf_event_broken_*,
#                                            lf_wake_broken_*, lf_broken_futex_*
# The headers say what exactly each broken variant breaks.  The renaming is
# done with -D so that the broken object and the real one (from the library)
# link into the same test binary; the tests declare the renamed prototypes.
# These objects never enter liblockfree.a.

LF_BROKEN_DIR = $(BUILD)/lockfree-broken

LF_RING_BROKEN_NAMES = create destroy push_spsc push_n_spsc pop_spsc peek_spsc size write_index read_index capacity slot_size
LF_RING_BROKEN_DEFS  = -DLF_RING_BROKEN $(foreach n,$(LF_RING_BROKEN_NAMES),-Dlf_ring_$(n)=lf_ring_broken_$(n))

LF_EVENT_BROKEN_NAMES = event_init event_set event_reset event_is_set event_has_sleepers event_wait \
                        event_test_window_hook wake_init wake_prepare wake_cancel wake_park wake_notify \
                        wake_parker_waiting
LF_EVENT_BROKEN_DEFS  = -DLF_EVENT_BROKEN -Dlf_futex_syscalls=lf_broken_futex_syscalls \
                        -Dlf_futex_wait_until=lf_broken_futex_wait_until -Dlf_futex_wake=lf_broken_futex_wake \
                        $(foreach n,$(LF_EVENT_BROKEN_NAMES),-Dlf_$(n)=lf_$(subst event_,event_broken_,$(subst wake_,wake_broken_,$(n))))

$(LF_BROKEN_DIR)/ring.o: lockfree/ring.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(LF_RING_BROKEN_DEFS) -c $< -o $@

$(LF_BROKEN_DIR)/event.o: lockfree/event.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) $(LF_EVENT_BROKEN_DEFS) -c $< -o $@

# The two tests link the broken object beside the library (objects first, so
# the library resolves what both need); otherwise the Makefile's test rule.
$(BUILD)/tests/test_lf_ring: $(BUILD)/tests/test_lf_ring.o $(LF_BROKEN_DIR)/ring.o $(LIB)
	$(CC) $(ALL_LDFLAGS) $^ -lcmocka $(LDLIBS_FB) -o $@
$(BUILD)/tests/test_lf_event: $(BUILD)/tests/test_lf_event.o $(LF_BROKEN_DIR)/event.o $(LIB)
	$(CC) $(ALL_LDFLAGS) $^ -lcmocka $(LDLIBS_FB) -o $@
