# mk/report.mk — `make report`: the standard set of every scenario, a figure for each, the report.
#
#   make report                  every run of scripts/plot/fbcatalog.py (a figure for every scenario
#                                of `fencebench list`), 3 repetitions each, into results/<date>-<host>/,
#                                then results/README.md (the index of published runs) rewritten
#   make report QUICK=1          fewer points and iterations, 1 repetition: the same figures in
#                                seconds, into $(BUILD)/report-quick/ (checks the tool; not for publishing)
#   make report ALLOW_DIRTY=1    from a tree with uncommitted changes (refused otherwise; the report says so)
#   make report DRY_RUN=1        check the tree and print the fencebench commands, run nothing
#   make report REPORT_DIR=/tmp/r REPORT_REPS=1 REPORT_ARGS='--cpus 0-1'
#
# scripts/plot/fbrun.py does the work: it refuses a modified tree or a stale
# binary, runs each scenario into REPORT_DIR/<run>.json (Google Benchmark
# JSON, written atomically), then scripts/plot/fbplot.py draws PNG + SVG
# figures and writes report.md, report.html and figures.json (all or nothing).
# The report's header names the revision, the flags and the command below;
# each figure's caption names its JSON and the commands that reproduce it.
# Nothing here is part of `make test` but the QUICK run tests/test_plot.c makes.

REPORT_REPS ?=
REPORT_ARGS ?=
FBPLOT       = scripts/plot/fbplot.py
FBRUN        = scripts/plot/fbrun.py
report_on    = $(filter-out 0 no,$(1))

# Date and host are read once, and only when the report is asked for.
ifneq ($(filter report,$(MAKECMDGOALS)),)
ifneq ($(call report_on,$(QUICK)),)
REPORT_DIR ?= $(BUILD)/report-quick
else
REPORT_DIR ?= results/$(shell date +%Y-%m-%d)-$(shell uname -n | cut -d. -f1)
endif
REPORT_DIR := $(REPORT_DIR)
endif

# The variables set on the make command line, so the report names the exact command.
REPORT_SET = $(foreach v,BUILD QUICK ALLOW_DIRTY REPORT_DIR REPORT_REPS REPORT_ARGS PYTHON,\
               $(if $(filter command line,$(origin $(v))),$(if $(word 2,$($(v))),$(v)='$($(v))',$(v)=$($(v)))))

report: $(FENCEBENCH)
	$(PYTHON) $(FBRUN) --fencebench $(FENCEBENCH) -o $(REPORT_DIR) --index results \
	  $(if $(call report_on,$(QUICK)),--quick) $(if $(call report_on,$(ALLOW_DIRTY)),--allow-dirty) \
	  $(if $(call report_on,$(DRY_RUN)),--dry-run) $(if $(REPORT_REPS),--repetitions $(REPORT_REPS)) \
	  $(if $(REPORT_ARGS),--args '$(REPORT_ARGS)') --reproduce "$(strip make report $(REPORT_SET))"

# tests/test_plot (and test_report_ci, test_noise: the report of a run) runs the scripts of
# this tree with this PYTHON, wherever the build tree is: the Makefile's compile rule, plus the paths.
$(addprefix $(BUILD)/tests/,test_plot.o test_report_ci.o test_noise.o): $(BUILD)/tests/%.o: tests/%.c | $(DEPS_STAMP)
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -DFB_PLOT_SCRIPT='"$(CURDIR)/$(FBPLOT)"' -DFB_RUN_SCRIPT='"$(CURDIR)/$(FBRUN)"' \
	  -DFB_PLOT_FIXTURES='"$(CURDIR)/tests/plot"' -DFB_PLOT_PYTHON='"$(PYTHON)"' -c $< -o $@
