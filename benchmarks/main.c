/* benchmarks/main.c — the fencebench CLI: the harness library (src/, fb_main)
 * run over this project's scenarios (benchmarks/scenarios/table.c).  See
 * `fencebench --help`. */
#include "benchmarks/scenarios/table.h"
#include "src/fb_scenario.h"

int main(int argc, char **argv)
{
	return fb_main(argc, argv, bm_scenarios);
}
