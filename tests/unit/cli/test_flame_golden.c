// SPDX-License-Identifier: MIT
/*
 * test_flame_golden.c - golden files for `flamegraph` and `diff`, and equality of every frame
 * (title, rectangle, colour, label) with FlameGraph's flamegraph.pl / difffolded.pl.
 *
 * Cases are listed in tests/golden/render/cases.txt. For each: our SVG must equal NAME.svg byte
 * for byte, and our frames rendered with --pl-compat must equal NAME.pl-frames, the frames Perl
 * drew. With FLAMEGRAPH_DIR set (a FlameGraph checkout; perl must run) the test also re-runs
 * Perl and checks NAME.pl-frames is still what Perl draws. FG_BLESS=1 rewrites both files and
 * needs FLAMEGRAPH_DIR: the oracle comes from flamegraph.pl, never from our own output. Every
 * line of cases.txt is a case, and every NAME.svg in the directory must have one.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <dirent.h>

#include "cmds.h"

struct gcase {
	char name[64], cmd[16], dopts[128], opts[256], files[256];
};

static char golden_dir[4096];

static char tmp_dir[] = "/tmp/fg_golden_XXXXXX";

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0, k;

	if (!f)
		return NULL;
	do {
		if (n + 65536 > cap) {
			char *nb;

			cap = (n + 65536) * 2;
			nb = realloc(buf, cap + 1);
			assert_non_null(nb);
			buf = nb;
		}
		k = fread(buf + n, 1, cap - n, f);
		n += k;
	} while (k > 0);
	fclose(f);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

static void spit(const char *path, const char *s, size_t n)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(s, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Copy the text between *p and the next occurrence of end, advancing *p past end. */
static bool field(const char **p, const char *end, char *out, size_t cap, size_t *outlen)
{
	const char *e = strstr(*p, end);
	size_t n;

	if (!e)
		return false;
	n = (size_t)(e - *p);
	if (n >= cap)
		return false;
	memcpy(out, *p, n);
	out[n] = '\0';
	*outlen = n;
	*p = e + strlen(end);
	return true;
}

/*
 * Canonical frames of an SVG in flamegraph.pl's frame format: "svg W H" then one sorted line
 * per frame, "title x y width height fill textx texty label" tab-separated.
 */
static char *canon(const char *svg)
{
	const char *p = strstr(svg, "<svg version=\"1.1\" width=\"");
	char **lines = NULL;
	size_t n = 0, cap = 0, total = 0, len = 0;
	char w[64], h[64], *out, *o;

	assert_non_null(p);
	p += strlen("<svg version=\"1.1\" width=\"");
	assert_true(field(&p, "\" height=\"", w, sizeof(w), &len));
	assert_true(field(&p, "\"", h, sizeof(h), &len));
	while ((p = strstr(p, "<g >\n<title>")) != NULL) {
		static const char *const seps[] = { "</title><rect x=\"",
						    "\" y=\"",
						    "\" width=\"",
						    "\" height=\"",
						    "\" fill=\"",
						    "\" rx=\"2\" ry=\"2\" />\n<text  x=\"",
						    "\" y=\"",
						    "\" >",
						    "</text>\n</g>\n" };
		size_t cap_line = strlen(p) + 1, o2 = 0;
		char *line = malloc(cap_line);

		assert_non_null(line);
		p += strlen("<g >\n<title>");
		for (size_t i = 0; i < sizeof(seps) / sizeof(seps[0]); i++) {
			assert_true(field(&p, seps[i], line + o2, cap_line - o2, &len));
			o2 += len;
			line[o2++] = i + 1 < sizeof(seps) / sizeof(seps[0]) ? '\t' : '\n';
		}
		line[o2] = '\0';
		if (n == cap) {
			char **nl;

			cap = cap ? cap * 2 : 256;
			nl = realloc(lines, cap * sizeof(*lines));
			assert_non_null(nl);
			lines = nl;
		}
		lines[n++] = line;
		total += o2;
	}
	if (n > 1)
		qsort(lines, n, sizeof(*lines), cmp_str);
	out = o = calloc(1, total + 160);
	assert_non_null(out);
	o += sprintf(o, "svg %s %s\n", w, h);
	for (size_t i = 0; i < n; i++) {
		o = stpcpy(o, lines[i]);
		free(lines[i]);
	}
	free(lines);
	return out;
}

/* Split s on spaces into argv[*argc...]; s is modified and must outlive argv. */
static void split_args(char *s, char **argv, int *argc, int max)
{
	for (char *t = strtok(s, " "); t && *argc < max; t = strtok(NULL, " "))
		argv[(*argc)++] = t;
}

static void run_ours(const struct gcase *c, bool compat, const char *out)
{
	char dopts[128], opts[256], files[256], *argv[64], paths[8][4400];
	int argc = 0, nf = 0;

	memcpy(dopts, c->dopts, sizeof(dopts));
	memcpy(opts, c->opts, sizeof(opts));
	memcpy(files, c->files, sizeof(files));
	argv[argc++] = (char *)c->cmd;
	split_args(dopts, argv, &argc, 40);
	split_args(opts, argv, &argc, 40);
	if (compat)
		argv[argc++] = "--pl-compat";
	argv[argc++] = "-o";
	argv[argc++] = (char *)out;
	for (char *t = strtok(files, " "); t && nf < 8; t = strtok(NULL, " "), nf++) {
		snprintf(paths[nf], sizeof(paths[nf]), "%s/%s", golden_dir, t);
		argv[argc++] = paths[nf];
	}
	argv[argc] = NULL;
	if (!strcmp(c->cmd, "diff"))
		assert_int_equal(cmd_diff(argc, argv), 0);
	else
		assert_int_equal(cmd_flamegraph(argc, argv), 0);
}

/* FLAMEGRAPH_DIR, or NULL when not set: then only the stored .pl-frames are the oracle. */
static const char *pl_dir(void)
{
	const char *d = getenv("FLAMEGRAPH_DIR");

	return d && *d ? d : NULL;
}

static bool have_perl(void)
{
	char path[4096];

	if (!pl_dir())
		return false;
	snprintf(path, sizeof(path), "%s/flamegraph.pl", pl_dir());
	return access(path, R_OK) == 0 && system("perl -e 1 >/dev/null 2>&1") == 0;
}

/* Perl's SVG for the case, in out. */
static void run_perl(const struct gcase *c, const char *out)
{
	char cmd[8192], files[1024] = "";
	char fcopy[256];
	int rv;

	memcpy(fcopy, c->files, sizeof(fcopy));
	for (char *t = strtok(fcopy, " "); t; t = strtok(NULL, " ")) {
		strcat(files, " '");
		strcat(files, golden_dir);
		strcat(files, "/");
		strcat(files, t);
		strcat(files, "'");
	}
	if (!strcmp(c->cmd, "diff"))
		snprintf(
			cmd, sizeof(cmd),
			"perl '%s/difffolded.pl' %s %s | perl '%s/flamegraph.pl' %s > '%s' 2>/dev/null",
			pl_dir(), c->dopts, files, pl_dir(), c->opts, out);
	else
		snprintf(cmd, sizeof(cmd), "perl '%s/flamegraph.pl' %s %s > '%s' 2>/dev/null",
			 pl_dir(), c->opts, files, out);
	rv = system(cmd);
	assert_true(rv != -1);
}

static void test_case(void **state)
{
	const struct gcase *c = *state;
	bool bless = getenv("FG_BLESS") && !strcmp(getenv("FG_BLESS"), "1");
	char ours[4200], compat[4200], perl[4200], gsvg[4200], gframes[4200];
	char *got, *want, *fr, *fr_want;
	size_t glen;

	snprintf(ours, sizeof(ours), "%s/%s.svg", tmp_dir, c->name);
	snprintf(compat, sizeof(compat), "%s/%s.compat.svg", tmp_dir, c->name);
	snprintf(perl, sizeof(perl), "%s/%s.perl.svg", tmp_dir, c->name);
	snprintf(gsvg, sizeof(gsvg), "%s/%s.svg", golden_dir, c->name);
	snprintf(gframes, sizeof(gframes), "%s/%s.pl-frames", golden_dir, c->name);

	run_ours(c, false, ours);
	got = slurp(ours, &glen);
	assert_non_null(got);
	if (bless)
		spit(gsvg, got, glen);
	want = slurp(gsvg, NULL);
	if (!want)
		fail_msg("%s missing: run with FG_BLESS=1 to create it", gsvg);
	if (strcmp(got, want) != 0)
		fail_msg("%s differs from %s (FG_BLESS=1 rewrites it after review)", ours, gsvg);

	run_ours(c, true, compat);
	free(got);
	got = slurp(compat, NULL);
	fr = canon(got);
	if (have_perl()) {
		char *psvg, *pfr;

		run_perl(c, perl);
		psvg = slurp(perl, NULL);
		assert_non_null(psvg);
		pfr = canon(psvg);
		if (bless)
			spit(gframes, pfr, strlen(pfr));
		fr_want = slurp(gframes, NULL);
		assert_non_null(fr_want);
		if (strcmp(pfr, fr_want) != 0)
			fail_msg(
				"%s is no longer what flamegraph.pl draws (FG_BLESS=1 rewrites it)",
				gframes);
		free(psvg);
		free(pfr);
	} else {
		fr_want = slurp(gframes, NULL);
		if (!fr_want)
			fail_msg("%s missing: FG_BLESS=1 with FLAMEGRAPH_DIR creates it", gframes);
	}
	if (strcmp(fr, fr_want) != 0) {
		spit(compat, fr, strlen(fr));
		fail_msg("frames of %s differ from flamegraph.pl's %s (ours canonical: %s)",
			 c->name, gframes, compat);
	}
	free(got);
	free(want);
	free(fr);
	free(fr_want);
}

/* Copy src into dst[cap]; false if it does not fit (a case must never be cut silently). */
static bool copy_field(char *dst, size_t cap, const char *src)
{
	return (size_t)snprintf(dst, cap, "%s", src) < cap;
}

/* Read cases.txt into *out (n cases, the caller frees). 0, or -1 with a message printed. */
static int read_cases(const char *path, struct gcase **out, size_t *n_out)
{
	struct gcase *cases = NULL;
	size_t n = 0, cap = 0;
	char line[1024];
	FILE *f = fopen(path, "r");

	if (!f) {
		fprintf(stderr, "cannot open %s (set FG_SOURCE_DIR)\n", path);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char *fields[5], *p = line;
		struct gcase *c;

		if (!strchr(line, '\n') && !feof(f)) {
			fprintf(stderr, "line too long in %s: %.60s...\n", path, line);
			goto fail;
		}
		line[strcspn(line, "\n")] = '\0';
		if (!line[0] || line[0] == '#')
			continue;
		if (n == cap) {
			struct gcase *nc;

			cap = cap ? cap * 2 : 32;
			nc = realloc(cases, cap * sizeof(*cases));
			if (!nc)
				goto fail;
			cases = nc;
		}
		c = &cases[n];
		for (int i = 0; i < 5; i++)
			fields[i] = strsep(&p, "|");
		if (!fields[4] || p) {
			fprintf(stderr, "bad line in %s (want 5 fields): %s\n", path, line);
			goto fail;
		}
		if (!copy_field(c->name, sizeof(c->name), fields[0]) ||
		    !copy_field(c->cmd, sizeof(c->cmd), fields[1]) ||
		    !copy_field(c->dopts, sizeof(c->dopts), fields[2]) ||
		    !copy_field(c->opts, sizeof(c->opts), fields[3]) ||
		    !copy_field(c->files, sizeof(c->files), fields[4])) {
			fprintf(stderr, "a field too long in %s: %s\n", path, line);
			goto fail;
		}
		for (size_t i = 0; i < n; i++) {
			if (!strcmp(cases[i].name, c->name)) {
				fprintf(stderr, "case %s listed twice in %s\n", c->name, path);
				goto fail;
			}
		}
		n++;
	}
	fclose(f);
	*out = cases;
	*n_out = n;
	return 0;
fail:
	fclose(f);
	free(cases);
	return -1;
}

/* Every NAME.svg in the golden directory belongs to a listed case. 0, or -1 with a message. */
static int check_orphans(const struct gcase *cases, size_t n)
{
	DIR *d = opendir(golden_dir);
	struct dirent *e;
	int rv = 0;

	if (!d) {
		fprintf(stderr, "cannot open %s\n", golden_dir);
		return -1;
	}
	while ((e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name);
		bool listed = false;

		if (len < 5 || strcmp(e->d_name + len - 4, ".svg") != 0)
			continue;
		for (size_t i = 0; i < n && !listed; i++)
			listed = strlen(cases[i].name) == len - 4 &&
				 !strncmp(cases[i].name, e->d_name, len - 4);
		if (!listed) {
			fprintf(stderr, "%s/%s has no line in cases.txt: list it or remove it\n",
				golden_dir, e->d_name);
			rv = -1;
		}
	}
	closedir(d);
	return rv;
}

int main(void)
{
	const char *src = getenv("FG_SOURCE_DIR");
	const char *bless = getenv("FG_BLESS");
	struct CMUnitTest *tests;
	struct gcase *cases;
	char path[4200];
	size_t n;
	int rv;

	snprintf(golden_dir, sizeof(golden_dir), "%s/tests/golden/render", src ? src : ".");
	if (bless && !strcmp(bless, "1") && !have_perl()) {
		fprintf(stderr, "FG_BLESS=1 needs FLAMEGRAPH_DIR, a FlameGraph checkout with "
				"flamegraph.pl and difffolded.pl, and perl: the .pl-frames oracle "
				"must come from flamegraph.pl, never from our own output\n");
		return 1;
	}
	if (pl_dir() && !have_perl()) {
		fprintf(stderr,
			"FLAMEGRAPH_DIR=%s: no readable flamegraph.pl there, or perl does "
			"not run\n",
			pl_dir());
		return 1;
	}
	snprintf(path, sizeof(path), "%s/cases.txt", golden_dir);
	if (read_cases(path, &cases, &n) != 0 || check_orphans(cases, n) != 0)
		return 1;
	if (n == 0) {
		fprintf(stderr, "no cases in %s\n", path);
		return 1;
	}
	tests = calloc(n, sizeof(*tests));
	if (!tests)
		return 1;
	for (size_t i = 0; i < n; i++)
		tests[i] = (struct CMUnitTest){ .name = cases[i].name,
						.test_func = test_case,
						.initial_state = &cases[i] };
	if (!mkdtemp(tmp_dir)) {
		perror("mkdtemp");
		return 1;
	}
	if (!pl_dir())
		print_message("FLAMEGRAPH_DIR not set: frames are checked against the stored "
			      ".pl-frames, without re-running flamegraph.pl\n");
	rv = _cmocka_run_group_tests("flame_golden", tests, n, NULL, NULL);
	if (rv == 0) {
		char cmd[256];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp_dir);
		if (system(cmd) != 0)
			return 1;
	}
	free(tests);
	free(cases);
	return rv;
}
