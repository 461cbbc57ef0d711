/* SPDX-License-Identifier: MIT */
/*
 * Where the control sockets live (preload/remote.c makes them, launcher/capture.c finds
 * them): one rule for both, so that they agree on the place and on what is trusted.
 *
 * For a process of uid U the directory is the first of
 *   1. $XDG_RUNTIME_DIR/inferscope       when the variable is set (absolute)
 *   2. /run/user/U/inferscope            when /run/user/U is U's own directory
 *   3. /tmp/inferscope-U
 * and it is used only when it is U's: a directory, not a link, owned by U, with no
 * access for group or others. A directory that fails this (another user made
 * /tmp/inferscope-U first) is refused by both sides with one line that says whose it is;
 * nothing falls back to a name another user could have chosen. Allocation-free and
 * without stdio: the library calls it from its listener thread.
 */
#ifndef ISC_SOCKDIR_H
#define ISC_SOCKDIR_H

#include <stdbool.h>
#include <stddef.h>

/* Candidate i (0..2) for uid into out; false when there is none (no $XDG_RUNTIME_DIR,
 * no /run/user/U of U's own) or it does not fit. */
bool isc_sockdir_candidate(int i, const char *xdg, unsigned uid, char *out, size_t cap);

/* 0 when dir is uid's own directory (lstat: a directory, owned by uid, mode & 077 == 0);
 * -ENOENT when it does not exist; else -EPERM with why (one clause: "owned by uid N",
 * "open to group or others", "not a directory") and *owner set. */
int isc_sockdir_check(const char *dir, unsigned uid, unsigned *owner, const char **why);

/* 0 when path is a socket owned by uid that group and others cannot write (lstat);
 * -ENOENT when absent; else -EPERM with why. */
int isc_sockdir_check_socket(const char *path, unsigned uid, const char **why);

#endif /* ISC_SOCKDIR_H */
