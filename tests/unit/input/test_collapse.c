// SPDX-License-Identifier: MIT
/*
 * test_collapse.c - the collapse module against outputs of FlameGraph's stackcollapse-perf.pl.
 *
 * Golden cases are listed in tests/golden/collapse/cases.txt: `perf script` text captured from
 * real JVM runs (with and without a perf map) and synthetic edge cases, each with the script's
 * output for one option set, compared byte for byte. FG_BLESS=1 rewrites the expectations by
 * running stackcollapse-perf.pl from FLAMEGRAPH_DIR, and refuses without it: our own output
 * is never recorded as the oracle.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <zlib.h>

#include "collapse.h"

struct text {
	char *p;
	size_t len;
	size_t cap;
};

static void text_add(struct text *t, const char *s, size_t n)
{
	if (t->len + n + 1 > t->cap) {
		t->cap = (t->len + n + 1) * 2;
		t->p = realloc(t->p, t->cap);
		assert_non_null(t->p);
	}
	memcpy(t->p + t->len, s, n);
	t->len += n;
	t->p[t->len] = '\0';
}

/* snprintf that fails the test instead of truncating. */
static void fmt(char *out, size_t size, const char *f, ...) __attribute__((format(printf, 3, 4)));
static void fmt(char *out, size_t size, const char *f, ...)
{
	va_list ap;
	int n;

	va_start(ap, f);
	n = vsnprintf(out, size, f, ap);
	va_end(ap);
	assert_true(n >= 0 && (size_t)n < size);
}

static const char *golden_dir(void)
{
	static char dir[4096];
	const char *src = getenv("FG_SOURCE_DIR");

	fmt(dir, sizeof(dir), "%s/tests/golden/collapse", src ? src : ".");
	return dir;
}

/* A whole file, gunzipped if it is gzip'd (gzread passes plain files through). */
static int read_file(const char *path, struct text *out)
{
	char buf[65536];
	gzFile f = gzopen(path, "rb");
	int n;

	memset(out, 0, sizeof(*out));
	if (!f)
		return -errno;
	text_add(out, "", 0);
	while ((n = gzread(f, buf, sizeof(buf))) > 0)
		text_add(out, buf, (size_t)n);
	gzclose(f);
	return n < 0 ? -EIO : 0;
}

static int emit(void *arg, const char *stack, size_t len, uint64_t count)
{
	struct text *t = arg;
	char num[32];
	int n = snprintf(num, sizeof(num), " %llu\n", (unsigned long long)count);

	text_add(t, stack, len);
	text_add(t, num, (size_t)n);
	return 0;
}

/* Collapse data fed in chunks of `chunk` bytes (0 = all at once); the folded text in *out. */
static void collapse_text(const struct collapse_opts *o, const char *data, size_t len, size_t chunk,
			  struct text *out, struct collapse_stats *st)
{
	struct collapse *c = collapse_new(o);
	size_t off = 0;

	assert_non_null(c);
	memset(out, 0, sizeof(*out));
	text_add(out, "", 0);
	while (off < len) {
		size_t n = chunk && chunk < len - off ? chunk : len - off;

		assert_int_equal(collapse_feed(c, data + off, n), 0);
		off += n;
	}
	assert_int_equal(collapse_end_input(c), 0);
	assert_int_equal(collapse_foreach(c, emit, out), 0);
	if (st)
		collapse_stats(c, st);
	collapse_free(c);
}

/* The options of the script's command line, as cases.txt spells them. */
static void parse_opts(char **argv, int argc, struct collapse_opts *o)
{
	memset(o, 0, sizeof(*o));
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--pid"))
			o->pid = true;
		else if (!strcmp(a, "--tid"))
			o->tid = true;
		else if (!strcmp(a, "--kernel"))
			o->kernel = true;
		else if (!strcmp(a, "--jit"))
			o->jit = true;
		else if (!strcmp(a, "--all"))
			o->kernel = o->jit = true;
		else if (!strcmp(a, "--addrs"))
			o->addrs = true;
		else if (!strcmp(a, "--srcline"))
			o->srcline = true;
		else if (!strncmp(a, "--event-filter=", 15))
			o->event_filter = a + 15;
		else
			fail_msg("cases.txt: unknown option %s", a);
	}
}

/* Regenerate an expectation with stackcollapse-perf.pl; 0 when written. */
static int bless_with_perl(const char *fgdir, const struct text *input, char **argv, int argc,
			   const char *expected)
{
	char tmp[] = "/tmp/fg-collapse-XXXXXX", cmd[8192];
	int fd = mkstemp(tmp), rv;
	size_t off = 0;

	if (fd < 0)
		return -errno;
	while (off < input->len) {
		ssize_t n = write(fd, input->p + off, input->len - off);

		if (n <= 0) {
			close(fd);
			unlink(tmp);
			return -EIO;
		}
		off += (size_t)n;
	}
	close(fd);
	off = (size_t)snprintf(cmd, sizeof(cmd), "perl '%s/stackcollapse-perf.pl'", fgdir);
	for (int i = 0; i < argc; i++)
		off += (size_t)snprintf(cmd + off, sizeof(cmd) - off, " '%s'", argv[i]);
	snprintf(cmd + off, sizeof(cmd) - off, " '%s' > '%s' 2>/dev/null", tmp, expected);
	rv = system(cmd);
	unlink(tmp);
	return rv == 0 ? 0 : -EIO;
}

/* Print the first differing line, so a failure says where. */
static void report_diff(const char *name, const struct text *want, const struct text *got)
{
	size_t i = 0, line = 1, ls = 0;

	while (i < want->len && i < got->len && want->p[i] == got->p[i]) {
		if (want->p[i] == '\n') {
			line++;
			ls = i + 1;
		}
		i++;
	}
	fprintf(stderr, "%s differs at line %zu:\n  want: %.200s\n  got:  %.200s\n", name, line,
		want->p + ls, got->p + ls);
}

static void test_goldens_match_stackcollapse_perf(void **state)
{
	char path[4096], line[1024];
	const char *bless = getenv("FG_BLESS"), *fgdir = getenv("FLAMEGRAPH_DIR");
	bool blessing = bless && !strcmp(bless, "1");
	FILE *cases;
	int ncases = 0, failed = 0;

	(void)state;
	if (blessing && !(fgdir && *fgdir))
		fail_msg("FG_BLESS=1 needs FLAMEGRAPH_DIR (a FlameGraph checkout): the expected "
			 "output must come from stackcollapse-perf.pl, never from our own");
	fmt(path, sizeof(path), "%s/cases.txt", golden_dir());
	cases = fopen(path, "r");
	assert_non_null(cases);
	while (fgets(line, sizeof(line), cases)) {
		char *argv[16], *tok, *save = NULL, *stem_end;
		char expected[4096], stem[1024];
		int argc = 0;
		struct collapse_opts o;
		struct text input, want, got;

		line[strcspn(line, "\n")] = '\0';
		if (line[0] == '#' || line[0] == '\0')
			continue;
		for (tok = strtok_r(line, " ", &save); tok && argc < 16;
		     tok = strtok_r(NULL, " ", &save))
			argv[argc++] = tok;
		assert_true(argc >= 2);
		fmt(stem, sizeof(stem), "%s", argv[0]);
		stem_end = strstr(stem, ".perf.txt");
		assert_non_null(stem_end);
		*stem_end = '\0';
		fmt(path, sizeof(path), "%s/%s", golden_dir(), argv[0]);
		fmt(expected, sizeof(expected), "%s/%s.%s.folded", golden_dir(), stem, argv[1]);
		assert_int_equal(read_file(path, &input), 0);
		parse_opts(argv + 2, argc - 2, &o);
		collapse_text(&o, input.p, input.len, 0, &got, NULL);
		if (blessing) {
			assert_int_equal(
				bless_with_perl(fgdir, &input, argv + 2, argc - 2, expected), 0);
			fprintf(stderr, "blessed %s\n", expected);
		}
		assert_int_equal(read_file(expected, &want), 0);
		if (want.len != got.len || memcmp(want.p, got.p, want.len)) {
			report_diff(expected, &want, &got);
			failed++;
		}
		assert_true(want.len > 0); /* every case produces stacks */
		ncases++;
		free(input.p);
		free(want.p);
		free(got.p);
	}
	fclose(cases);
	assert_true(ncases >= 20);
	assert_int_equal(failed, 0);
}

/* Chunk boundaries anywhere, even inside a line or at its '\n', change nothing. */
static void test_chunked_feeding_gives_identical_output(void **state)
{
	static const size_t chunks[] = { 1, 2, 3, 7, 64, 4093 };
	struct collapse_opts o = { .kernel = true, .jit = true, .tid = true };
	struct text input, whole, part;
	char path[4096];

	(void)state;
	fmt(path, sizeof(path), "%s/jvm-map.perf.txt.gz", golden_dir());
	assert_int_equal(read_file(path, &input), 0);
	collapse_text(&o, input.p, input.len, 0, &whole, NULL);
	assert_true(whole.len > 1000);
	for (size_t i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
		collapse_text(&o, input.p, input.len, chunks[i], &part, NULL);
		assert_int_equal(part.len, whole.len);
		assert_memory_equal(part.p, whole.p, whole.len);
		free(part.p);
	}
	free(input.p);
	free(whole.p);
}

/* Small inputs, each pinning one rule of the script (expectations printed by the script). */
static const struct rule_case {
	const char *name;
	struct collapse_opts o;
	const char *in;
	const char *want;
} rule_cases[] = {
	{ "comm with spaces becomes underscores; a frame-less sample still counts",
	  { 0 },
	  "V8 WorkerThread 25607 4794564.109216: 104345 cycles:\n\n",
	  "V8_WorkerThread 104345\n" },
	{ "pid and tid come from pid/tid; a lone number is the tid",
	  { .tid = true },
	  "java 12688/12764 6544038.708352: 7 cpu-clock:\n\njava 25607 1.0: 1 cpu-clock:\n\n",
	  "java-12688/12764 7\njava-?/25607 1\n" },
	{ "a comm is two characters at least: a one-letter comm runs on to the next number",
	  { .tid = true },
	  "a 1 1.0: 2 c:\n\n",
	  "a_1_1.0:-?/2 2\n" },
	{ "a zero tid means the number is the tid and the pid is unknown",
	  { .tid = true },
	  "java 5/0 1.0: 3 cpu-clock:\n\n",
	  "java-?/5 3\n" },
	{ "only the first event type is kept",
	  { 0 },
	  "ab 1 1.0: 2 cycles:\n\ta1 f (m)\n\nab 1 1.0: 5 instructions:\n\ta1 g (m)\n\n",
	  "ab;f 2\n" },
	{ "a filtered header leaves the previous sample open",
	  { 0 },
	  "ab 1 1.0: 2 cycles:\n\ta1 f (m)\nab 1 1.0: 5 other:\n\ta1 g (m)\n\n",
	  "ab;g;f 2\n" },
	{ "period 0 or none counts 1, 00 counts 0",
	  { 0 },
	  "ab 1 1.0: 0 c:\n\nab 1 1.0: c:\n\nbc 1 1.0: 00 c:\n\n",
	  "ab 2\nbc 0\n" },
	{ "offsets are stripped and argument lists cut",
	  { 0 },
	  "ab 1 1.0: 1 c:\n\t1 void X.m(int, long)+0x1f (m)\n\t2 f(g)+0xAB (m)\n\n",
	  "ab;f;void X.m 1\n" },
	{ "[unknown] takes the module's base name, or stays unknown; --addrs adds the pc",
	  { .addrs = true },
	  "ab 1 1.0: 1 c:\n\tab [unknown] (/lib/x.so)\n\tcd [unknown] ([unknown])\n\n",
	  "ab;[unknown <cd>];[x.so <ab>] 1\n" },
	{ "kernel and jit annotations come from the module",
	  { .kernel = true, .jit = true },
	  "ab 1 1.0: 1 c:\n\t1 k ([kernel.kallsyms])\n\t2 j (/tmp/perf-9.map)\n\t3 u (/x)\n\n",
	  "ab;u;j_[j];k_[k] 1\n" },
	{ "inlined pieces after -> are marked _[i] and keep their order",
	  { 0 },
	  "ab 1 1.0: 1 c:\n\t1 x->y->z (m)\n\t2 main (m)\n\n",
	  "ab;main;x;y_[i];z_[i] 1\n" },
	{ "Java signatures lose their L only in java processes",
	  { 0 },
	  "java 1 1.0: 1 c:\n\t1 Lorg/a/B;.m(I)V (m)\n\nnode 1 1.0: 1 c:\n\t1 Lorg/a/B;.m(I)V (m)\n\n",
	  "java;org/a/B:.m 1\nnode;Lorg/a/B:.m 1\n" },
	{ "Go methods and anonymous namespaces keep their parentheses",
	  { 0 },
	  "ab 1 1.0: 1 c:\n\t1 net/http.(*Client).Do (m)\n\t2 ns::(anonymous namespace)::f(int) (m)\n\n",
	  "ab;ns::(anonymous namespace)::f;net/http.(*Client).Do 1\n" },
	{ "a perf inline line without a pc loses its first word to the pc",
	  { 0 },
	  "ab 1 1.0: 1 c:\n\t55 compute (m)\n\t\t inline_helper (inlined)\n\n",
	  "ab;r;compute 1\n" },
	{ "a sample without its blank line is not counted",
	  { 0 },
	  "ab 1 1.0: 1 c:\n\t1 f (m)",
	  "" },
	{ "empty symbols and modules (the first frame's too) are taken as they come",
	  { .kernel = true, .jit = true },
	  "ab 1 1.0: 1 c:\n\t1  ()\n\t2  ()\n\t3 ->x (m)\n\n",
	  "ab;;x_[i]; ;  1\n" },
	{ "source lines follow known frames with --srcline",
	  { .srcline = true },
	  "ab 1 1.0: 1 c:\n\t1 f (m)\n  f.c:3\n\t2 [unknown] ([unknown])\n\t3 g (m)\n  [x]\n\n",
	  "ab;g;[unknown];f:f.c:3 1\n" },
};

static void test_single_rules_match_the_script(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(rule_cases) / sizeof(rule_cases[0]); i++) {
		const struct rule_case *rc = &rule_cases[i];
		struct text got;

		collapse_text(&rc->o, rc->in, strlen(rc->in), 0, &got, NULL);
		if (strcmp(got.p, rc->want))
			fail_msg("%s:\nwant: %s\ngot:  %s", rc->name, rc->want, got.p);
		free(got.p);
	}
}

/* As Perl's <>: a last line without '\n' is a line, and state carries into the next file. */
static void test_end_input_processes_last_line_and_state_carries_over(void **state)
{
	struct collapse *c = collapse_new(NULL);
	struct text got = { 0 };

	(void)state;
	assert_non_null(c);
	text_add(&got, "", 0);
	assert_int_equal(collapse_feed(c, "java 1 1.0: 3 c:\n\t1 f (m)", 25), 0);
	assert_int_equal(collapse_end_input(c), 0);
	assert_int_equal(collapse_feed(c, "\t2 g (m)\n\n", 10), 0);
	assert_int_equal(collapse_end_input(c), 0);
	assert_int_equal(collapse_foreach(c, emit, &got), 0);
	assert_string_equal(got.p, "java;g;f 3\n");
	collapse_free(c);
	free(got.p);
}

static void test_overlong_line_is_skipped_and_counted(void **state)
{
	struct collapse_opts o = { .max_line = 64 };
	struct collapse_stats st;
	struct text in = { 0 }, got;
	char frame[200];

	(void)state;
	memset(frame, 'x', sizeof(frame));
	text_add(&in, "ab 1 1.0: 1 c:\n\t1 ", 18);
	text_add(&in, frame, sizeof(frame));
	text_add(&in, " (m)\n\t2 g (m)\n\n", 15);
	for (size_t chunk = 0; chunk < 8; chunk += 7) {
		collapse_text(&o, in.p, in.len, chunk, &got, &st);
		assert_string_equal(got.p, "ab;g 1\n");
		assert_int_equal(st.long_lines, 1);
		assert_int_equal(st.lines, 4);
		free(got.p);
	}
	free(in.p);
}

static void test_oversized_stack_is_dropped_and_counted(void **state)
{
	struct collapse_opts o = { .max_stack = 100 };
	struct collapse_stats st;
	struct text in = { 0 }, got;

	(void)state;
	text_add(&in, "ab 1 1.0: 1 c:\n", 15);
	for (int i = 0; i < 20; i++)
		text_add(&in, "\t1 function (m)\n", 16);
	text_add(&in, "\nbc 1 1.0: 1 c:\n\t1 f (m)\n\n", 26);
	collapse_text(&o, in.p, in.len, 0, &got, &st);
	assert_string_equal(got.p, "bc;f 1\n");
	assert_int_equal(st.dropped_samples, 1);
	assert_int_equal(st.samples, 1);
	free(got.p);
	free(in.p);
}

static void test_memory_cap_refuses_more_stacks(void **state)
{
	struct collapse_opts o = { .max_memory = 2u << 20 };
	struct collapse *c = collapse_new(&o);
	char line[64];
	int rv = 0, i;

	(void)state;
	assert_non_null(c);
	for (i = 0; i < 1000000 && rv == 0; i++) {
		int n = snprintf(line, sizeof(line), "ab 1 1.0: 1 c:\n\t1 f%d (m)\n\n", i);

		rv = collapse_feed(c, line, (size_t)n);
	}
	assert_int_equal(rv, -E2BIG);
	assert_true(i > 1000);
	assert_int_equal(collapse_feed(c, "\n", 1), -E2BIG); /* sticky */
	collapse_free(c);
}

static int stop_after_two(void *arg, const char *stack, size_t len, uint64_t count)
{
	int *n = arg;

	(void)stack;
	(void)len;
	(void)count;
	return ++*n == 2 ? 42 : 0;
}

static void test_foreach_stops_at_first_callback_error(void **state)
{
	struct collapse *c = collapse_new(NULL);
	static const char in[] = "ab 1 1.0: 1 c:\n\nbc 1 1.0: 1 c:\n\ncd 1 1.0: 1 c:\n\n";
	int n = 0;

	(void)state;
	assert_non_null(c);
	assert_int_equal(collapse_feed(c, in, sizeof(in) - 1), 0);
	assert_int_equal(collapse_foreach(c, stop_after_two, &n), 42);
	assert_int_equal(n, 2);
	collapse_free(c);
}

struct sorted_check {
	struct text prev;
	bool first;
};

static int check_sorted(void *arg, const char *stack, size_t len, uint64_t count)
{
	struct sorted_check *sc = arg;
	size_t m = len < sc->prev.len ? len : sc->prev.len;

	(void)count;
	if (!sc->first) {
		int r = memcmp(sc->prev.p, stack, m);

		assert_true(r < 0 || (r == 0 && sc->prev.len < len));
	}
	assert_null(memchr(stack, '\n', len));
	sc->first = false;
	sc->prev.len = 0;
	text_add(&sc->prev, stack, len);
	return 0;
}

/* Random bytes and mutated real input, under every option: no crash, sorted output. */
static void test_random_garbage_does_not_crash(void **state)
{
	struct text input, mutated = { 0 };
	char path[4096];
	unsigned seed = 12345;

	(void)state;
	fmt(path, sizeof(path), "%s/edge.perf.txt", golden_dir());
	assert_int_equal(read_file(path, &input), 0);
	for (int round = 0; round < 600; round++) {
		struct collapse_opts o = {
			.pid = round & 1,
			.tid = round & 2,
			.kernel = round & 4,
			.jit = round & 8,
			.addrs = round & 16,
			.srcline = round & 32,
			.max_line = (round & 64) ? 40 : 0,
			.max_stack = (round & 128) ? 200 : 0,
		};
		struct collapse *c = collapse_new(&o);
		struct sorted_check sc = { .first = true };

		assert_non_null(c);
		mutated.len = 0;
		if (round % 3 == 0) {
			for (int i = 0; i < 4000; i++) {
				char ch = (char)(rand_r(&seed) & 0xff);

				if ((rand_r(&seed) & 7) == 0)
					ch = "\n \t()[];:/->+0x"[rand_r(&seed) % 15];
				text_add(&mutated, &ch, 1);
			}
		} else {
			text_add(&mutated, input.p, input.len);
			for (int i = 0; i < 1 + round % 40; i++) {
				size_t at = (size_t)rand_r(&seed) % mutated.len;

				mutated.p[at] = (rand_r(&seed) & 1) ? (char)(rand_r(&seed) & 0xff)
								    : "\n \t()[];:/->+0x"[at % 15];
			}
			mutated.len = (size_t)rand_r(&seed) % (mutated.len + 1);
		}
		for (size_t off = 0; off < mutated.len;) {
			size_t n = 1 + (size_t)rand_r(&seed) % 300;

			if (n > mutated.len - off)
				n = mutated.len - off;
			assert_int_equal(collapse_feed(c, mutated.p + off, n), 0);
			off += n;
		}
		assert_int_equal(collapse_end_input(c), 0);
		text_add(&sc.prev, "", 0);
		assert_int_equal(collapse_foreach(c, check_sorted, &sc), 0);
		free(sc.prev.p);
		collapse_free(c);
	}
	free(mutated.p);
	free(input.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_goldens_match_stackcollapse_perf),
		cmocka_unit_test(test_chunked_feeding_gives_identical_output),
		cmocka_unit_test(test_single_rules_match_the_script),
		cmocka_unit_test(test_end_input_processes_last_line_and_state_carries_over),
		cmocka_unit_test(test_overlong_line_is_skipped_and_counted),
		cmocka_unit_test(test_oversized_stack_is_dropped_and_counted),
		cmocka_unit_test(test_memory_cap_refuses_more_stacks),
		cmocka_unit_test(test_foreach_stops_at_first_callback_error),
		cmocka_unit_test(test_random_garbage_does_not_crash),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
