// SPDX-License-Identifier: MIT
/*
 * test_flame_golden.c - golden files for `flamegraph` and `diff`, and equality of every frame
 * (title, rectangle, colour, label) with FlameGraph's flamegraph.pl / difffolded.pl.
 *
 * Cases are listed in tests/golden/render/cases.txt. For each: our SVG must equal NAME.svg byte
 * for byte, and our frames rendered with --pl-compat must equal NAME.pl-frames, the frames Perl
 * drew. With FG_BLESS=1 both files are rewritten (the .pl-frames only where perl and
 * FLAMEGRAPH_DIR, default /work/FlameGraph, exist). Where Perl is available the test also
 * re-runs it and checks NAME.pl-frames is still what Perl draws.
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

static const char *pl_dir(void)
{
	const char *d = getenv("FLAMEGRAPH_DIR");

	return d && *d ? d : "/work/FlameGraph";
}

static bool have_perl(void)
{
	char path[4096];

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
			fail_msg("%s missing: bless where perl and FlameGraph exist", gframes);
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

int main(void)
{
	const char *src = getenv("FG_SOURCE_DIR");
	struct CMUnitTest tests[64];
	struct gcase cases[64];
	char path[4200], line[1024];
	size_t n = 0;
	FILE *f;
	int rv;

	snprintf(golden_dir, sizeof(golden_dir), "%s/tests/golden/render", src ? src : ".");
	snprintf(path, sizeof(path), "%s/cases.txt", golden_dir);
	f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "cannot open %s (set FG_SOURCE_DIR)\n", path);
		return 1;
	}
	while (fgets(line, sizeof(line), f) && n < 64) {
		struct gcase *c = &cases[n];
		char *fields[5], *p = line;

		line[strcspn(line, "\n")] = '\0';
		if (!line[0] || line[0] == '#')
			continue;
		for (int i = 0; i < 5; i++)
			fields[i] = strsep(&p, "|");
		if (!fields[4]) {
			fprintf(stderr, "bad line in %s: %s\n", path, line);
			return 1;
		}
		snprintf(c->name, sizeof(c->name), "%s", fields[0]);
		snprintf(c->cmd, sizeof(c->cmd), "%s", fields[1]);
		snprintf(c->dopts, sizeof(c->dopts), "%s", fields[2]);
		snprintf(c->opts, sizeof(c->opts), "%s", fields[3]);
		snprintf(c->files, sizeof(c->files), "%s", fields[4]);
		tests[n] = (struct CMUnitTest){ .name = c->name,
						.test_func = test_case,
						.initial_state = c };
		n++;
	}
	fclose(f);
	if (!mkdtemp(tmp_dir)) {
		perror("mkdtemp");
		return 1;
	}
	rv = _cmocka_run_group_tests("flame_golden", tests, n, NULL, NULL);
	if (rv == 0) {
		char cmd[256];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp_dir);
		if (system(cmd) != 0)
			return 1;
	}
	return rv;
}
