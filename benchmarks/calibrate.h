/* benchmarks/calibrate.h — `fencebench calibrate`: the operations of a
 * timing profile's "measured" (benchmarks/profile.h) on this machine's
 * NVIDIA GPU, through the CUDA driver API opened at run time
 * (dlopen("libcuda.so.1"): nothing of CUDA is needed to build), and a
 * profile JSON derived from them with the machine's description.
 *
 *   fencebench calibrate [--out FILE] [--name NAME] [--rounds N] [--device N]
 *
 * Exit status: 0 written; 1 a measurement failed on the GPU; 2 a bad
 * command line, or no GPU or driver here (one line says which).  Called
 * from main() through fb_program_commands; the main thread only. */
#ifndef BM_CALIBRATE_H
#define BM_CALIBRATE_H

#include "src/fb_scenario.h"

int bm_calibrate_main(int argc, char **argv);
extern const struct fb_command bm_commands[];

#endif
