/* benchmarks/main.c — the fencebench CLI: the harness library (src/, fb_main)
 * run over this project's scenarios (benchmarks/scenarios/table.c), with
 * the `profile` parameter on every scenario (benchmarks/profile.h) and the
 * `calibrate` command (benchmarks/calibrate.h).  See
 * `fencebench --help`. */
#include "benchmarks/calibrate.h"
#include "benchmarks/profile.h"
#include "benchmarks/scenarios/table.h"
#include "src/fb_scenario.h"

int main(int argc, char **argv)
{
	bm_profile_describe();   /* the profile row names the shipped profiles */
	fb_program_params(bm_common_params);
	fb_program_commands(bm_commands);   /* calibrate (benchmarks/calibrate.h) */
	return fb_main(argc, argv, bm_scenarios);
}
