/* SPDX-License-Identifier: MIT */
/*
 * `meson install` into a temporary DESTDIR, then the installed tree used as a user
 * would: the library preloaded by its file name only (the loader finds it through
 * LD_LIBRARY_PATH, as through ld.so.cache after a system install), the installed
 * launcher and analyzer, the header, pkg-config, the Python helper and the manuals.
 */
#include <criterion/criterion.h>
#include <ctype.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/common/isc-test.h"

static char *dest;
static char prefix[PATH_MAX], libdir[PATH_MAX], bindir[PATH_MAX], work[PATH_MAX];

/* D + PREFIX/DIR, or D + DIR when DIR is absolute. */
static void staged(char *out, const char *dir)
{
	const char *p = isc_test_env("ISC_PREFIX");
	if (dir[0] == '/') {
		snprintf(out, PATH_MAX, "%s%s", dest, dir);
	} else {
		snprintf(out, PATH_MAX, "%s%s/%s", dest, p, dir);
	}
}

static const char *path_in(const char *dir, const char *name)
{
	static char buf[4][PATH_MAX * 2];
	static int k;
	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", dir, name);
	return buf[k];
}

static void run_ok(const char *const *argv, const char *const *env, struct isc_run *r)
{
	cr_assert_eq(isc_test_run(argv, env, false, work, r), 0);
	cr_assert(WIFEXITED(r->status) && WEXITSTATUS(r->status) == 0, "%s: status %#x\n%s\n%s",
		  argv[0], r->status, r->out, r->err);
}

/*
 * One install for the whole suite, before any test runs. The tests run in fresh
 * processes that inherit the environment, not the variables, of this one: the hook
 * leaves the place (and, since a report hook cannot assert, a failure) there.
 */

static const char *getenv_or_empty(const char *name)
{
	const char *v = getenv(name);
	return v != NULL ? v : "";
}

ReportHook(PRE_ALL)(struct criterion_test_set *set)
{
	(void)set;
	/* meson test points LD_LIBRARY_PATH at the build tree: the installed copy must be
	 * the only one the loader can find by name */
	unsetenv("LD_LIBRARY_PATH");
	dest = isc_test_tmpdir();
	snprintf(work, sizeof(work), "%s/work", dest ? dest : "/nonexistent");
	const char *argv[] = { getenv_or_empty("ISC_MESON"),
			       "install",
			       "-C",
			       getenv_or_empty("ISC_BUILD_ROOT"),
			       "--no-rebuild",
			       "--destdir",
			       dest ? dest : "/nonexistent",
			       NULL };
	struct isc_run r = { 0 };
	if (dest == NULL || mkdir(work, 0755) != 0 || isc_test_run(argv, NULL, false, NULL, &r) ||
	    !WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0) {
		char msg[8192];
		snprintf(msg, sizeof(msg), "meson install failed (%#x): %s%s", r.status,
			 r.out ? r.out : "", r.err ? r.err : "");
		setenv("ISC_E2E_INSTALL_ERROR", msg, 1);
	}
	if (dest != NULL) {
		setenv("ISC_E2E_DEST", dest, 1);
	}
	isc_run_free(&r);
}

ReportHook(POST_ALL)(struct criterion_global_stats *stats)
{
	(void)stats;
	if (dest != NULL) {
		isc_test_rmrf(dest);
		free(dest);
	}
}

static void setup(void)
{
	const char *err = getenv("ISC_E2E_INSTALL_ERROR");
	cr_assert_null(err, "%s", err);
	dest = (char *)isc_test_env("ISC_E2E_DEST");
	snprintf(work, sizeof(work), "%s/work", dest);
	snprintf(prefix, sizeof(prefix), "%s%s", dest, isc_test_env("ISC_PREFIX"));
	staged(libdir, isc_test_env("ISC_LIBDIR"));
	staged(bindir, isc_test_env("ISC_BINDIR"));
}

TestSuite(install, .init = setup, .timeout = 120);

Test(install, files_in_place)
{
	char inc[PATH_MAX], man[PATH_MAX];
	staged(inc, isc_test_env("ISC_INCLUDEDIR"));
	staged(man, isc_test_env("ISC_MANDIR"));
	const char *files[] = {
		path_in(libdir, "libinferscope.so"),	    path_in(bindir, "inferscope"),
		path_in(bindir, "inferscope-analyze"),	    path_in(inc, "inferscope/inferscope.h"),
		path_in(libdir, "pkgconfig/inferscope.pc"), path_in(bindir, "inferscope-watch"),
	};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		cr_assert(isc_test_exists(files[i]), "%s is not installed", files[i]);
	}
	const char *pages[] = { "man1/inferscope.1", "man1/inferscope-analyze.1",
				"man1/inferscope-watch.1", "man7/libinferscope.7" };
	for (size_t i = 0; i < sizeof(pages) / sizeof(pages[0]); i++) {
		FILE *f = fopen(path_in(man, pages[i]), "r");
		cr_assert_not_null(f, "%s is not installed", pages[i]);
		char line[1024];
		cr_assert_not_null(fgets(line, sizeof(line), f));
		while (strncmp(line, ".TH", 3) != 0 && fgets(line, sizeof(line), f) != NULL) {
		}
		fclose(f);
		cr_assert(strstr(line, isc_test_env("ISC_VERSION")) != NULL && !strstr(line, "@"),
			  "%s: the version is filled in: %s", pages[i], line);
	}
}

/* The library by file name: LD_PRELOAD=libinferscope.so, as the README shows. */
Test(install, preload_by_file_name)
{
	char ld[PATH_MAX + 32], real[PATH_MAX];
	snprintf(ld, sizeof(ld), "LD_LIBRARY_PATH=%s", libdir);
	const char *env[] = { "LD_PRELOAD=libinferscope.so", ld, NULL };
	struct isc_run r;
	run_ok((const char *const[]){ isc_test_env("ISC_E2E_PROG"), "maps", "libinferscope", NULL },
	       env, &r);
	cr_assert_not_null(realpath(path_in(libdir, "libinferscope.so"), real));
	char want[PATH_MAX + 2];
	snprintf(want, sizeof(want), "%s\n", real);
	cr_assert_str_eq(r.out, want, "the installed copy is the one loaded");
	isc_run_free(&r);

	const char *named[] = { "LD_PRELOAD=libinferscope.so", ld, "INFERSCOPE_OUTPUT=work.json",
				NULL };
	run_ok((const char *const[]){ isc_test_env("ISC_E2E_PROG"), "work", "150", NULL }, named,
	       &r);
	isc_run_free(&r);
	cr_assert(isc_test_exists(path_in(work, "work.json")), "the preloaded library wrote it");
	run_ok((const char *const[]){ path_in(bindir, "inferscope-analyze"), "--check", "scopes>=1",
				      "work.json", NULL },
	       NULL, &r);
	cr_assert(strstr(r.out, "e2e\\_work") != NULL, "%s", r.out);
	isc_run_free(&r);
}

/* The installed launcher finds the installed library and analyzer by itself. */
Test(install, launcher_finds_its_tree)
{
	struct isc_run r;
	run_ok((const char *const[]){ path_in(bindir, "inferscope"), "run", "-o", "l-maps.json",
				      "--", isc_test_env("ISC_E2E_PROG"), "maps", "libinferscope",
				      NULL },
	       NULL, &r);
	char real[PATH_MAX];
	cr_assert_not_null(realpath(path_in(libdir, "libinferscope.so"), real));
	cr_assert(strncmp(r.out, real, strlen(real)) == 0, "%s", r.out);
	isc_run_free(&r);
	run_ok((const char *const[]){ path_in(bindir, "inferscope"), "run", "-o", "l.json", "--",
				      isc_test_env("ISC_E2E_PROG"), "work", "120", NULL },
	       NULL, &r);
	cr_assert(strstr(r.out, "# InferScope report") != NULL, "%s", r.err);
	isc_run_free(&r);
}

static bool has_tool(const char *name)
{
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", name);
	return system(cmd) == 0;
}

Test(install, pkg_config_and_header)
{
	if (!has_tool("pkg-config") || !has_tool("cc")) {
		cr_skip_test("pkg-config or cc missing");
	}
	char pc[PATH_MAX + 32], cmd[PATH_MAX * 4];
	snprintf(pc, sizeof(pc), "PKG_CONFIG_PATH=%s/pkgconfig", libdir);
	const char *env[] = { pc, NULL };
	struct isc_run r;
	run_ok((const char *const[]){ "/bin/sh", "-c",
				      "pkg-config --cflags inferscope && "
				      "pkg-config --variable=preload inferscope && "
				      "pkg-config --libs inferscope",
				      NULL },
	       env, &r);
	char want[PATH_MAX * 4];
	snprintf(want, sizeof(want), "-I%s/%s \n%s/%s/libinferscope.so\n\n",
		 isc_test_env("ISC_PREFIX"), isc_test_env("ISC_INCLUDEDIR"),
		 isc_test_env("ISC_PREFIX"), isc_test_env("ISC_LIBDIR"));
	cr_assert_str_eq(r.out, want, "cflags, the library's path, and nothing to link");
	isc_run_free(&r);
	/* the installed header compiles on its own */
	snprintf(cmd, sizeof(cmd),
		 "printf '#include <inferscope/inferscope.h>\\nint main(void)"
		 "{inferscope_range_push(\"x\");return inferscope_range_pop();}\\n' | cc -x c "
		 "-fsyntax-only -Wall -Werror -I'%s%s/%s' -",
		 dest, isc_test_env("ISC_PREFIX"), isc_test_env("ISC_INCLUDEDIR"));
	run_ok((const char *const[]){ "/bin/sh", "-c", cmd, NULL }, NULL, &r);
	isc_run_free(&r);
}

static char found_py[PATH_MAX];

static int find_py(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)ftw;
	size_t n = strlen(path);
	const char *tail = "/inferscope/__init__.py";
	if (flag == FTW_F && n > strlen(tail) && strcmp(path + n - strlen(tail), tail) == 0) {
		snprintf(found_py, sizeof(found_py), "%.*s", (int)(n - strlen(tail)), path);
		return 1;
	}
	return 0;
}

/* Python prints its answer to CODE under PYTHONPATH=dir, or fails the test. */
static char *python_says(const char *python, const char *dir, const char *code)
{
	char pp[PATH_MAX + 16];
	snprintf(pp, sizeof(pp), "PYTHONPATH=%s", dir);
	const char *env[] = { pp, NULL };
	struct isc_run r;
	run_ok((const char *const[]){ python, "-s", "-c", code, NULL }, env, &r);
	char *out = r.out;
	r.out = NULL;
	isc_run_free(&r);
	return out;
}

/*
 * The helper is where Debian's python3 looks without being told (the site directory
 * of the prefix: not site-packages, which only the interpreter meson ran may search),
 * and DATADIR/inferscope/python leads every other interpreter to that one copy.
 */
Test(install, python_helper)
{
	cr_assert_eq(nftw(prefix, find_py, 16, FTW_PHYS), 1, "inferscope/__init__.py installed");
	const char *site = found_py + strlen(dest); /* where it lands without DESTDIR */
	const char *p = isc_test_env("ISC_PREFIX");
	if (isc_test_exists("/usr/bin/python3") &&
	    (strcmp(p, "/usr") == 0 || strcmp(p, "/usr/local") == 0)) {
		char *out = python_says("/usr/bin/python3", "",
					"import site; print(*site.getsitepackages(), sep='\\n')");
		char want[PATH_MAX + 2];
		snprintf(want, sizeof(want), "%s\n", site);
		cr_assert(strstr(out, want) != NULL,
			  "%s is not searched by Debian's python3, which searches:\n%s", site, out);
		free(out);
		out = python_says("/usr/bin/python3", found_py,
				  "import inferscope; print(inferscope.__file__)");
		cr_assert(strncmp(out, found_py, strlen(found_py)) == 0, "%s", out);
		free(out);
	}
	char neutral[PATH_MAX], real[PATH_MAX];
	staged(neutral, isc_test_env("ISC_DATADIR"));
	strcat(neutral, "/inferscope/python");
	cr_assert_not_null(realpath(found_py, real));
	size_t n = 0;
	for (const char *py; (py = isc_test_nth_path(isc_test_env("ISC_PYTHONS"), n)); n++) {
		char *out = python_says(py, neutral,
					"import inferscope, os; "
					"print(os.path.realpath(inferscope.__file__)); "
					"print(inferscope.active())");
		cr_assert(strncmp(out, real, strlen(real)) == 0, "%s: %s", py, out);
		cr_assert(strstr(out, "\nFalse\n") != NULL, "%s: a no-op without the preload: %s",
			  py, out);
		free(out);
	}
	cr_assert_gt(n, 0, "interpreters tried");
}

static char *read_page(const char *page)
{
	char man[PATH_MAX];
	staged(man, isc_test_env("ISC_MANDIR"));
	FILE *f = fopen(path_in(man, page), "r");
	cr_assert_not_null(f, "%s", page);
	char *text = NULL;
	size_t cap = 0;
	cr_assert_gt(getdelim(&text, &cap, '\0', f), 0);
	fclose(f);
	return text;
}

/* Every --option of a command's --help is in its manual, written \-\-option. */
static void options_documented(const char *const *help_argv, const char *page)
{
	struct isc_run r;
	run_ok(help_argv, NULL, &r);
	char *text = read_page(page);
	size_t n = 0;
	for (const char *p = strstr(r.out, "--"); p != NULL; p = strstr(p + 1, "--")) {
		char want[128];
		size_t k = 0;
		for (const char *q = p; (*q == '-' || (*q >= 'a' && *q <= 'z')) && k < 120; q++) {
			if (*q == '-') {
				want[k++] = '\\';
			}
			want[k++] = *q;
		}
		want[k] = '\0';
		if (k > 4) {
			cr_expect(strstr(text, want) != NULL, "%s: %s is not documented", page,
				  want);
			n++;
		}
		p += k / 2;
	}
	cr_assert_gt(n, 5, "options found in --help");
	free(text);
	isc_run_free(&r);
}

Test(install, manuals_cover_every_option)
{
	options_documented(
		(const char *const[]){ path_in(bindir, "inferscope-analyze"), "--help", NULL },
		"man1/inferscope-analyze.1");
	options_documented((const char *const[]){ path_in(bindir, "inferscope"), "--help", NULL },
			   "man1/inferscope.1");
	options_documented(
		(const char *const[]){ path_in(bindir, "inferscope-watch"), "--help", NULL },
		"man1/inferscope-watch.1");
	struct isc_run r;
	run_ok((const char *const[]){ path_in(bindir, "inferscope-analyze"), "--list-rules", NULL },
	       NULL, &r);
	char *text = read_page("man1/inferscope-analyze.1");
	for (char *line = strtok(r.out, "\n"); line != NULL; line = strtok(NULL, "\n")) {
		char id[64];
		cr_assert_eq(sscanf(line, "%63s", id), 1);
		char want[80];
		snprintf(want, sizeof(want), ".B %s\n", id);
		cr_expect(strstr(text, want) != NULL, "rule %s is not in inferscope-analyze.1", id);
	}
	for (int code = 0; code <= 4; code++) {
		char want[16];
		snprintf(want, sizeof(want), ".B %d\n", code);
		cr_expect(strstr(text, want) != NULL, "exit status %d is not documented", code);
	}
	free(text);
	isc_run_free(&r);
}

static size_t occurrences(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = strstr(hay, needle); p != NULL; p = strstr(p + 1, needle)) {
		n++;
	}
	return n;
}

/*
 * The manuals stand on their own once installed: the documents they cite are installed
 * where they say, inferscope-analyze(1) defines the categories it reports, each option is
 * described once, and each rule goes by the one id --list-rules gives it.
 */
Test(install, manuals_are_complete_once_installed)
{
	static const char *const pages[] = { "man1/inferscope.1", "man1/inferscope-analyze.1",
					     "man1/inferscope-watch.1", "man7/libinferscope.7" };
	struct isc_run r;
	run_ok((const char *const[]){ path_in(bindir, "inferscope-analyze"), "--list-rules", NULL },
	       NULL, &r);
	char *rules = r.out;
	r.out = NULL;
	isc_run_free(&r);
	size_t cited = 0;
	for (size_t i = 0; i < sizeof(pages) / sizeof(pages[0]); i++) {
		char *text = read_page(pages[i]);
		/* every path under the prefix a page names is installed */
		const char *prefix_path = isc_test_env("ISC_PREFIX");
		for (const char *p = strstr(text, prefix_path); p != NULL;
		     p = strstr(p + 1, prefix_path)) {
			char rel[PATH_MAX], file[PATH_MAX * 2];
			size_t k = strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789/._-");
			snprintf(rel, sizeof(rel), "%.*s", (int)k, p);
			while (k > 0 && rel[k - 1] == '.') {
				rel[--k] = '\0'; /* the end of a sentence */
			}
			if (strstr(rel, "/doc/") == NULL) {
				continue;
			}
			snprintf(file, sizeof(file), "%s%s", dest, rel);
			cr_expect(isc_test_exists(file), "%s cites %s, which is not installed",
				  pages[i], rel);
			cited++;
		}
		cr_expect(strstr(text, "docs/") == NULL, "%s cites the source tree's docs/",
			  pages[i]);
		/* an option's entry once: no two identical ".B \-\-name..." or ".BI" lines
		 * (inferscope(1) describes subcommands that share option names) */
		bool one_command = strcmp(pages[i], "man1/inferscope.1") != 0;
		for (const char *p = strstr(text, "\n.B"); p != NULL && one_command;
		     p = strstr(p + 1, "\n.B")) {
			size_t k = strcspn(p + 1, "\n");
			const char *o = strstr(p, "\\-\\-");
			if (o == NULL || o - p > 6 || p[3] == 'R' || k > 200) {
				continue;
			}
			char line[208];
			snprintf(line, sizeof(line), "\n%.*s\n", (int)k, p + 1);
			cr_expect_eq(occurrences(text, line), 1, "%s describes %.*s twice",
				     pages[i], (int)k, p + 1);
		}
		/* rule ids (family.word-word: thresholds have underscores) are --list-rules' */
		static const char *const families[] = { "alloc.", "copy.",   "data.",	  "gpu.",
							"host.",  "launch.", "pipeline.", "sync." };
		for (size_t f = 0; f < sizeof(families) / sizeof(families[0]); f++) {
			for (const char *p = strstr(text, families[f]); p != NULL;
			     p = strstr(p + 1, families[f])) {
				size_t k = strspn(p, "abcdefghijklmnopqrstuvwxyz._-");
				if ((p > text && isalnum((unsigned char)p[-1])) || p[k] == '*' ||
				    memchr(p, '_', k) != NULL || k == strlen(families[f])) {
					continue;
				}
				char id[80], line[96];
				snprintf(id, sizeof(id), "%.*s", (int)k, p);
				while (strlen(id) > 0 && strchr(".-", id[strlen(id) - 1])) {
					id[strlen(id) - 1] = '\0';
				}
				snprintf(line, sizeof(line), "%s ", id);
				cr_expect(strncmp(rules, line, strlen(line)) == 0 ||
						  strstr(rules, line) != NULL,
					  "%s calls a rule %s, which --list-rules does not know",
					  pages[i], id);
			}
		}
		free(text);
	}
	cr_assert_gt(cited, 0, "the manuals cite the installed documents");
	free(rules);
	char *text = read_page("man1/inferscope-analyze.1");
	char *cat = strstr(text, "\n.SH CATEGORIES\n");
	cr_assert_not_null(cat, "inferscope-analyze(1) has a CATEGORIES section");
	static const char *const categories[] = { "gpu_compute",       "h2d_copy",
						  "d2h_copy",	       "framework_overhead",
						  "cpu_preprocessing", "idle" };
	for (size_t i = 0; i < sizeof(categories) / sizeof(categories[0]); i++) {
		char want[64];
		snprintf(want, sizeof(want), ".TP\n.B %s\n", categories[i]);
		cr_expect(strstr(cat, want) != NULL, "CATEGORIES does not define %s",
			  categories[i]);
	}
	free(text);
}
