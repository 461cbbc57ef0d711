/* SPDX-License-Identifier: MIT */
#include "common/sockdir.h"

#include <errno.h>
#include <sys/stat.h>

#include "common/log.h"

bool isc_sockdir_candidate(int i, const char *xdg, unsigned uid, char *out, size_t cap)
{
	char run[64];
	struct stat st;
	size_t n;
	switch (i) {
	case 0:
		if (xdg == NULL || xdg[0] != '/') {
			return false;
		}
		n = isc_fmt(out, cap, "%s/inferscope", xdg);
		break;
	case 1:
		/* the login manager's directory: only when it is the user's, else a process
		 * without $XDG_RUNTIME_DIR (a service, cron) would use a name it cannot own */
		isc_fmt(run, sizeof(run), "/run/user/%u", uid);
		if (lstat(run, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != uid ||
		    (st.st_mode & 022) != 0) {
			return false;
		}
		n = isc_fmt(out, cap, "%s/inferscope", run);
		break;
	case 2:
		n = isc_fmt(out, cap, "/tmp/inferscope-%u", uid);
		break;
	default:
		return false;
	}
	return n + 1 < cap;
}

int isc_sockdir_check(const char *dir, unsigned uid, unsigned *owner, const char **why)
{
	struct stat st;
	if (lstat(dir, &st) != 0) {
		return errno == ENOENT ? -ENOENT : -errno;
	}
	*owner = (unsigned)st.st_uid;
	if (!S_ISDIR(st.st_mode)) {
		*why = "not a directory";
	} else if (st.st_uid != uid) {
		*why = "owned by another user";
	} else if ((st.st_mode & 077) != 0) {
		*why = "open to group or others";
	} else {
		return 0;
	}
	return -EPERM;
}

int isc_sockdir_check_socket(const char *path, unsigned uid, const char **why)
{
	struct stat st;
	if (lstat(path, &st) != 0) {
		return errno == ENOENT ? -ENOENT : -errno;
	}
	if (!S_ISSOCK(st.st_mode)) {
		*why = "not a socket";
	} else if (st.st_uid != uid) {
		*why = "owned by another user";
	} else if ((st.st_mode & 022) != 0) {
		*why = "writable by group or others";
	} else {
		return 0;
	}
	return -EPERM;
}
