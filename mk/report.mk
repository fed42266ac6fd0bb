# mk/report.mk — `make report`: a short run of the fence scenarios, its figures and report.
#
#   make report                       into results/<date>-<host>/ (about 30 s on 2 cores)
#   make report REPORT_DIR=/tmp/r     elsewhere
#   make report REPORT_REPS=1 REPORT_ARGS='--cpus 0-1'   fewer repetitions, extra run options
#
# Runs $(FENCEBENCH) four times, each writing Google Benchmark JSON atomically:
#   headline.json         native vs legacy at the headline workload
#   irq-suppression.json  sweep of the waited fraction over REPORT_WAITED
#   cpu-wait.json         GPU signal -> blocked CPU waiter running
#   gpu-wait.json         signal on engine A -> engine B past its wait
# then scripts/plot/fbplot.py draws PNG + SVG figures and writes report.md beside
# them (all or nothing: a failed plot leaves the directory as it was).  With
# REPORT_REPS > 1 every number is the median of the repetitions.  Nothing here
# is part of `make test` (tests/test_plot.c checks the script); results/ holds
# published runs and is committed by hand, if at all.

REPORT_WAITED ?= 0,0.1,0.25,0.5,0.75,1
REPORT_ITERS  ?= 5000
REPORT_REPS   ?= 3
REPORT_ARGS   ?=
FBPLOT         = scripts/plot/fbplot.py

# Date and host are read once, and only when the report is asked for.
ifneq ($(filter report,$(MAKECMDGOALS)),)
REPORT_DIR ?= results/$(shell date +%Y-%m-%d)-$(shell uname -n | cut -d. -f1)
REPORT_DIR := $(REPORT_DIR)
endif

# The variables set on the make command line, so the report names the exact command.
REPORT_SET = $(foreach v,BUILD REPORT_DIR REPORT_WAITED REPORT_ITERS REPORT_REPS REPORT_ARGS PYTHON,\
               $(if $(filter command line,$(origin $(v))),$(if $(word 2,$($(v))),$(v)='$($(v))',$(v)=$($(v)))))

REPORT_RUN = $(FENCEBENCH) $(1) --repetitions $(REPORT_REPS) $(REPORT_ARGS) \
             --format json --out $(REPORT_DIR)/$(2).json

report: $(FENCEBENCH)
	@mkdir -p $(REPORT_DIR)
	$(call REPORT_RUN,run headline,headline)
	$(call REPORT_RUN,sweep irq-suppression --grid waited=$(REPORT_WAITED) --iterations $(REPORT_ITERS),irq-suppression)
	$(call REPORT_RUN,run cpu-wait --iterations $(REPORT_ITERS),cpu-wait)
	$(call REPORT_RUN,run gpu-wait --iterations $(REPORT_ITERS),gpu-wait)
	$(PYTHON) $(FBPLOT) --out-dir $(REPORT_DIR) --reproduce "$(strip make report $(REPORT_SET))" \
	  $(REPORT_DIR)/headline.json $(REPORT_DIR)/irq-suppression.json \
	  $(REPORT_DIR)/cpu-wait.json $(REPORT_DIR)/gpu-wait.json
	@echo "report: $(REPORT_DIR)/report.md"

# tests/test_plot runs the script of this tree with this PYTHON, wherever the build tree is:
# the Makefile's compile rule, plus the two paths.
$(BUILD)/tests/test_plot.o: tests/test_plot.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DFB_PLOT_SCRIPT='"$(CURDIR)/$(FBPLOT)"' -DFB_PLOT_PYTHON='"$(PYTHON)"' -c $< -o $@
