/* src/fb_file.h — the files the harness writes: --out targets and sweep journals.
 *
 * An --out path is checked before any work starts (fb_out_open) and written
 * once the results are rendered (fb_out_write):
 *
 *   what the path names            how it is written
 *   -----------------------------  -------------------------------------------------
 *   nothing yet                    a temporary beside it, fsync, rename (atomic)
 *   a regular file                 the same, keeping the file's permission bits
 *   a symbolic link                followed (also when dangling): the link stays,
 *                                  its target is written as above
 *   an open descriptor of ours     in place, through that descriptor: /dev/stdout,
 *   (/dev/stdout, /dev/stderr,     /dev/stderr, /dev/fd/N, /proc/self/fd/N; nothing is
 *   /dev/fd/N, /proc/self/fd/N)    truncated, and a descriptor opened to append appends
 *                                  (`--out /dev/stdout >> log` keeps what log held)
 *   a FIFO or a character device   in place (opened and written; /dev/null, a pipe
 *                                  perf or a shell reads from).  A FIFO without a
 *                                  reader, or whose reader stopped reading (also
 *                                  stdout's pipe), is waited for, until SIGINT or
 *                                  SIGTERM
 *   a folder, a socket, a block    refused
 *   device, a missing folder, a
 *   place no file can be created
 *
 * The replacing is durable: the temporary is fsync'd, renamed onto the
 * target, and the folder fsync'd.  The new file has the old one's permission
 * bits (rwx, not set-user-ID, set-group-ID or sticky), and the owner of
 * whoever runs fencebench (as `install` without -o):
 * the old file's owner, ACLs and extra hard links are not carried over (a
 * hard link keeps the old content).  A rename that fails (a sticky folder, a
 * file of another user) keeps the results: the temporary is renamed
 * TARGET.unsaved.XXXXXX and the error names it.
 *
 * Temporaries are named TARGET.tmp.PID.XXXXXX, are locked (flock) by their
 * writer while they exist, and live only inside fb_out_write (fb_signal_hold:
 * a SIGINT or SIGTERM waits for them to go).  fb_out_open removes those a
 * killed fencebench left beside the same target: a temporary whose lock it can
 * take (the PID in the name is not trusted: PIDs are reused, and other
 * machines or containers share folders).
 *
 * A journal (fb_file_open_journal) is only ever a regular file of one link,
 * never reached through a symbolic link: a planted FILE.journal link or a
 * hard link to another file is refused, not truncated.
 *
 * Error messages are one line; a long path is shortened in the middle
 * (fb_file_shown) so the reason always fits.  Single thread (the CLI's), apart
 * from what fb_signal.h says.
 */
#ifndef FB_FILE_H
#define FB_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct fb_out {
	char *path;        /* as given (after the shard suffix, if any) */
	char *target;      /* where the bytes land: path with symbolic links followed */
	bool in_place;     /* FIFO, character device or open descriptor: written, no temporary */
	int fd;            /* the open descriptor path names (/dev/stdout...), or -1 */
	mode_t mode;       /* permission bits of the file written (the existing file's) */
	bool exists;       /* dev and ino name the file path reaches */
	dev_t dev;
	ino_t ino;
	char *where;       /* when nothing exists yet: the real folder and the name */
};

/* a and b reach the same file (device and inode; for a file not yet there,
 * the same real folder and name), so one would overwrite the other. */
bool fb_out_same(const struct fb_out *a, const struct fb_out *b);

/* out reaches the file stdout is (--out /dev/stdout, or the file stdout was
 * redirected to): the console table is then not printed on stdout. */
bool fb_out_is_stdout(const struct fb_out *out);

/* fflush(stdout), remembering the first error: 0 or -errno. */
int fb_file_flush_stdout(void);
/* Did anything written to stdout through stdio fail (flushing what is left)?
 * 0, or -errno of the first failure (-EIO when unknown). */
int fb_file_stdout_error(void);

/* Write text to stdout, all of it, and flush: 0, or -errno with one line
 * "stdout: cannot write: why" (a full disk, a closed pipe); -ECANCELED when
 * a SIGINT or SIGTERM came while stdout's pipe was full (its reader not
 * reading): what was written stays written. */
int fb_file_write_stdout(const char *text, char *err, size_t errlen);

/* Check that path can take the results, before any work: 0 with *out filled
 * (free it with fb_out_free), or -EINVAL with one line "--out PATH: why".
 * Removes temporaries of killed runs beside the target. */
int fb_out_open(struct fb_out *out, const char *path, char *err, size_t errlen);
void fb_out_free(struct fb_out *out);
/* Write data as the table above says.  On error the target is untouched
 * (atomic case) and no temporary is left (a failed rename keeps the results
 * as TARGET.unsaved.XXXXXX, named in err).  In place, -ECANCELED: a SIGINT or
 * SIGTERM came while a FIFO's or pipe's reader was not reading.  0, or -errno
 * with one line in err. */
int fb_out_write(const struct fb_out *out, const char *data, size_t len, char *err, size_t errlen);

/* PATH with ".shardI-of-N" before its extension ("r/s.json" -> "r/s.shard1-of-4.json").  New string. */
char *fb_file_shard_name(const char *path, unsigned index, unsigned count);

/* Open (creating) the journal at path for reading and appending: a regular
 * file with one link, not a symbolic link, opened without blocking.  Returns
 * the fd (close-on-exec), or -errno with one line in err ("journal PATH: why";
 * -EINVAL for what the user must fix: not a regular file, several links). */
int fb_file_open_journal(const char *path, char *err, size_t errlen);

/* Buffer size for fb_file_shown. */
#define FB_FILE_SHOWN_MAX 256
/* path fit for a one-line message: whole when short, else its start, "...",
 * and its end (the file name).  Non-printable characters as '?'.  Returns buf. */
const char *fb_file_shown(const char *path, char *buf, size_t len);

#endif
