/* src/main.c — the fencebench CLI.  Everything lives in the library (src/fb_app.c)
 * so tests and fuzzers reach the same code; see `fencebench --help`. */
#include "src/fb_app.h"

int main(int argc, char **argv)
{
	return fb_app_main(argc, argv);
}
