/* benchmarks/embedded.h — the shipped data files, built into the binary.
 *
 * The JSON files of benchmarks/profiles/ (timing profiles) and benchmarks/workloads/
 * (frame graphs) are compiled into every fencebench binary, so one copied
 * executable (`make portable`) still finds them on a machine that has no
 * checkout.  The files in the tree stay the source: the table is generated
 * from them at build time (scripts/embed-files.py, mk/portable.mk), and
 * readers try the file first and take the built-in copy only where the
 * file is not there (benchmarks/profile.c, benchmarks/replay.c).
 *
 * Threads: any; the table is constant and nothing here blocks.
 */
#ifndef BM_EMBEDDED_H
#define BM_EMBEDDED_H

#include <stddef.h>

struct bm_embedded {
	const char *path;          /* as in the tree: "benchmarks/profiles/h200-pcie5.json" */
	const unsigned char *text; /* its bytes, with a terminating 0 after len */
	size_t len;
};

/* The built-in files, sorted by path, ended by an entry whose path is NULL
 * (written by scripts/embed-files.py). */
extern const struct bm_embedded bm_embedded_files[];

/* The built-in copy of the tree file `path` (root-relative, as above; a
 * leading "./" is ignored), or NULL when none is built in. */
const struct bm_embedded *bm_embedded_find(const char *path);

/* The built-in files under `dir` (root-relative, no trailing '/') whose names
 * end in `suffix`, in path order: pass i = 0, 1, ... until it returns NULL. */
const struct bm_embedded *bm_embedded_in(const char *dir, const char *suffix, size_t i);

#endif
