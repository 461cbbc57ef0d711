/* SPDX-License-Identifier: MIT */
/*
 * The control socket: `inferscope capture PID` asks a running process for a window
 * (window.h) over a Unix stream socket
 *
 *   $XDG_RUNTIME_DIR/inferscope/<pid>.sock   (else /run/user/<uid>/inferscope, else
 *                                            /tmp/inferscope-<uid>: common/sockdir.h)
 *
 * in a directory of mode 0700 owned by the user (one that is not is refused aloud: no
 * socket), the socket 0600; a peer whose credentials (SO_PEERCRED) are neither the
 * process's user nor root is refused. Sockets of the user's killed processes are
 * removed when the socket is made. One thread, started lazily with the collector (or at
 * the first hooked call of a paused process), listens and serves up to 8 requesters at
 * once (poll), each with an absolute deadline for its line: a slow one delays nobody. It unshares its descriptor table (unshare(CLONE_FILES)) and
 * closes what it inherited, so its descriptors are in no table the program can see,
 * close (close_range, a loop over 0..1023) or hand to a child; where unshare is not
 * allowed (a seccomp policy), the socket sits above the low numbers, close-on-exec,
 * and is checked and recreated when the program closed or reused it.
 *
 * The protocol, one line each way (docs/trace-format.md, "Capture protocol"):
 *   PING                          -> INFERSCOPE pid=P pgid=G sid=S mode=M
 *   CAPTURE steps=N [step=NAME]   -> STARTED, then OK path=FILE steps=N events=E
 *   CAPTURE duration_ns=D         -> STARTED, then OK ...
 *   a second CAPTURE while one runs -> ERR busy: ...
 * A requester that hangs up abandons its window.
 */
#ifndef ISC_REMOTE_H
#define ISC_REMOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* From the constructor: the socket's directory, from the environment then. */
void isc_remote_init(void);
/* Starts the listener thread unless it runs in this process or INFERSCOPE_LISTEN=0. */
void isc_remote_start(void);
/* The collector's tick: starts the listener once per process. */
void isc_remote_tick(uint64_t now);
/* Whether the listener was started in this process. */
bool isc_remote_running(void);
/* Around a fork (collector.h, "Paused around a fork"): ends the listener and returns
 * true, or returns false when it is busy with a requester and stays; the collector's
 * tick or, in a paused process, the idle hook starts it again. */
bool isc_remote_pause(void);
/* After fork in the child: the thread is the parent's; a visible socket descriptor
 * (fallback mode) is closed. */
void isc_remote_reset_after_fork(void);
/* At the final flush: the socket file is removed. */
void isc_remote_stop(void);

#endif /* ISC_REMOTE_H */
