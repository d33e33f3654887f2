// SPDX-License-Identifier: MIT
/*
 * test_pprof.c - the pprof writer: the gzip'd file is decoded back with a small protobuf
 * reader and checked field by field; with --go, `go tool pprof -top` must read it and list
 * the Java names with the right total (go missing fails; exit 77 only with
 * FG_ALLOW_MISSING_TOOLS=1).
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
#include <zlib.h>

#include <cmocka.h>

#include "pprof.h"

#define PERIOD_NS 10101010 /* 99 Hz */

/* ---- a minimal profile.proto reader ---- */

struct pb {
	const uint8_t *p, *end;
};

static uint64_t pb_varint(struct pb *b)
{
	uint64_t v = 0;

	for (int shift = 0; shift < 64; shift += 7) {
		assert_true(b->p < b->end);
		uint8_t c = *b->p++;

		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return v;
	}
	fail_msg("varint too long");
	return 0;
}

/* Next field: returns its number, sets *wt and either *v (varint) or *sub (bytes). */
static unsigned int pb_field(struct pb *b, unsigned int *wt, uint64_t *v, struct pb *sub)
{
	uint64_t key = pb_varint(b);

	*wt = key & 7;
	if (*wt == 0) {
		*v = pb_varint(b);
	} else if (*wt == 2) {
		uint64_t n = pb_varint(b);

		assert_true(n <= (uint64_t)(b->end - b->p));
		sub->p = b->p;
		sub->end = b->p + n;
		b->p += n;
	} else {
		fail_msg("unexpected wire type %u", *wt);
	}
	return (unsigned int)(key >> 3);
}

#define MAXN 256

struct sample {
	uint64_t loc[MAXN];
	size_t nloc;
	int64_t val[4];
	size_t nval;
	uint64_t label_key, label_str;
};

struct prof {
	char *str[MAXN];
	size_t nstr;
	uint64_t st_type[4], st_unit[4];
	size_t nst;
	struct sample smp[MAXN];
	size_t nsmp;
	uint64_t loc_id[MAXN], loc_fn[MAXN];
	size_t nloc;
	uint64_t fn_id[MAXN], fn_name[MAXN];
	size_t nfn;
	uint64_t period, pt_type, pt_unit, time, duration, default_type;
	uint64_t comment[8];
	size_t ncomment;
};

static void packed(struct pb *sub, uint64_t *out, size_t *n)
{
	while (sub->p < sub->end) {
		assert_true(*n < MAXN);
		out[(*n)++] = pb_varint(sub);
	}
}

static void decode_sample(struct pb *b, struct sample *s)
{
	unsigned int wt;
	uint64_t v;
	struct pb sub;

	memset(s, 0, sizeof(*s));
	while (b->p < b->end) {
		switch (pb_field(b, &wt, &v, &sub)) {
		case 1:
			packed(&sub, s->loc, &s->nloc);
			break;
		case 2:
			packed(&sub, (uint64_t *)s->val, &s->nval);
			break;
		case 3:
			while (sub.p < sub.end) {
				struct pb x;
				unsigned int f = pb_field(&sub, &wt, &v, &x);

				if (f == 1)
					s->label_key = v;
				else if (f == 2)
					s->label_str = v;
			}
			break;
		}
	}
}

static void decode_profile(const uint8_t *d, size_t n, struct prof *p)
{
	struct pb b = { d, d + n }, sub, x;
	unsigned int wt, f;
	uint64_t v;

	memset(p, 0, sizeof(*p));
	while (b.p < b.end) {
		switch (pb_field(&b, &wt, &v, &sub)) {
		case 1:
			while (sub.p < sub.end) {
				f = pb_field(&sub, &wt, &v, &x);
				if (f == 1)
					p->st_type[p->nst] = v;
				else
					p->st_unit[p->nst] = v;
			}
			p->nst++;
			break;
		case 2:
			assert_true(p->nsmp < MAXN);
			decode_sample(&sub, &p->smp[p->nsmp++]);
			break;
		case 4:
			while (sub.p < sub.end) {
				f = pb_field(&sub, &wt, &v, &x);
				if (f == 1) {
					p->loc_id[p->nloc] = v;
				} else if (f == 4) {
					struct pb y;

					while (x.p < x.end)
						if (pb_field(&x, &wt, &v, &y) == 1)
							p->loc_fn[p->nloc] = v;
				}
			}
			p->nloc++;
			break;
		case 5:
			while (sub.p < sub.end) {
				f = pb_field(&sub, &wt, &v, &x);
				if (f == 1)
					p->fn_id[p->nfn] = v;
				else if (f == 2)
					p->fn_name[p->nfn] = v;
			}
			p->nfn++;
			break;
		case 6:
			assert_true(p->nstr < MAXN);
			p->str[p->nstr] = strndup((const char *)sub.p, (size_t)(sub.end - sub.p));
			p->nstr++;
			break;
		case 9:
			p->time = v;
			break;
		case 10:
			p->duration = v;
			break;
		case 11:
			while (sub.p < sub.end) {
				f = pb_field(&sub, &wt, &v, &x);
				if (f == 1)
					p->pt_type = v;
				else
					p->pt_unit = v;
			}
			break;
		case 12:
			p->period = v;
			break;
		case 13:
			assert_true(p->ncomment < 8);
			p->comment[p->ncomment++] = v;
			break;
		case 14:
			p->default_type = v;
			break;
		}
	}
}

static void prof_free(struct prof *p)
{
	for (size_t i = 0; i < p->nstr; i++)
		free(p->str[i]);
}

static const char *S(const struct prof *p, uint64_t i)
{
	assert_true(i < p->nstr);
	return p->str[i];
}

/* Name of the function of location id `loc`. */
static const char *loc_name(const struct prof *p, uint64_t loc)
{
	for (size_t i = 0; i < p->nloc; i++) {
		if (p->loc_id[i] != loc)
			continue;
		for (size_t k = 0; k < p->nfn; k++)
			if (p->fn_id[k] == p->loc_fn[i])
				return S(p, p->fn_name[k]);
	}
	fail_msg("location %llu undefined", (unsigned long long)loc);
	return NULL;
}

/* Write p gzip'd to a temp file, read it back, gunzip and decode. */
static void roundtrip(const struct pprof *pp, struct prof *out)
{
	char path[] = "/tmp/test_pprof.XXXXXX";
	int fd = mkstemp(path);
	static uint8_t raw[1 << 20];
	gzFile gz;
	int n;

	assert_true(fd >= 0);
	assert_int_equal(pprof_write_gz(pp, fd), 0);
	close(fd);
	gz = gzopen(path, "rb");
	assert_non_null(gz);
	assert_int_equal(gzdirect(gz), 0); /* really gzip, not passed through */
	n = gzread(gz, raw, sizeof(raw));
	assert_true(n > 0);
	gzclose(gz);
	unlink(path);
	decode_profile(raw, (size_t)n, out);
}

/* ---- tests ---- */

static const char *const stack_a[] = { "java-main", "com.example.Main::main_[j]",
				       "com.example.Foo::bar_[j]" };
static const char *const stack_b[] = { "java-main", "com.example.Main::main_[j]",
				       "com.example.Baz::qux_[j]", "com.example.Foo::bar_[j]" };

static void test_file_is_gzip_profile_with_cpu_sample_types(void **state)
{
	struct pprof *pp = pprof_new(PERIOD_NS);
	struct prof p;

	(void)state;
	assert_non_null(pp);
	pprof_set_time(pp, 1700000000000000000ll, 5000000000ll);
	assert_int_equal(pprof_add(pp, stack_a, 3, 7, NULL), 0);
	roundtrip(pp, &p);
	assert_string_equal(S(&p, 0), "");
	assert_int_equal(p.nst, 2);
	assert_string_equal(S(&p, p.st_type[0]), "samples");
	assert_string_equal(S(&p, p.st_unit[0]), "count");
	assert_string_equal(S(&p, p.st_type[1]), "cpu");
	assert_string_equal(S(&p, p.st_unit[1]), "nanoseconds");
	assert_string_equal(S(&p, p.pt_type), "cpu");
	assert_string_equal(S(&p, p.pt_unit), "nanoseconds");
	assert_string_equal(S(&p, p.default_type), "cpu");
	assert_int_equal(p.period, PERIOD_NS);
	assert_int_equal(p.time, 1700000000000000000ll);
	assert_int_equal(p.duration, 5000000000ll);
	assert_int_equal(p.nsmp, 1);
	assert_int_equal(p.smp[0].nval, 2);
	assert_int_equal(p.smp[0].val[0], 7);
	assert_int_equal(p.smp[0].val[1], 7ll * PERIOD_NS);
	prof_free(&p);
	pprof_free(pp);
}

/* Off-CPU and wall profiles: one sample type in nanoseconds, counts given in microseconds. */
static void test_time_profiles_have_their_own_sample_type(void **state)
{
	static const char *const types[] = { "off_cpu", "wall" };

	(void)state;
	for (size_t i = 0; i < 2; i++) {
		struct pprof *pp = pprof_new(1000);
		struct prof p;

		assert_non_null(pp);
		assert_int_equal(pprof_set_time_type(pp, types[i]), 0);
		assert_int_equal(pprof_add(pp, stack_a, 3, 1500, "java-main"), 0);
		roundtrip(pp, &p);
		assert_int_equal(p.nst, 1);
		assert_string_equal(S(&p, p.st_type[0]), types[i]);
		assert_string_equal(S(&p, p.st_unit[0]), "nanoseconds");
		assert_string_equal(S(&p, p.pt_type), types[i]);
		assert_string_equal(S(&p, p.pt_unit), "nanoseconds");
		assert_string_equal(S(&p, p.default_type), types[i]);
		assert_int_equal(p.nsmp, 1);
		assert_int_equal(p.smp[0].nval, 1);
		assert_int_equal(p.smp[0].val[0], 1500ll * 1000);
		prof_free(&p);
		pprof_free(pp);
	}
}

/* Allocation, live and lock profiles: two sample types, the aux value first. */
static void test_event_profiles_have_two_sample_types(void **state)
{
	static const struct {
		const char *t1, *u1, *t2, *u2, *pt, *pu;
		uint64_t period;
	} ev[] = {
		{ "alloc_objects", "count", "alloc_space", "bytes", "space", "bytes", 1 },
		{ "inuse_objects", "count", "inuse_space", "bytes", "space", "bytes", 1 },
		{ "contentions", "count", "delay", "nanoseconds", "contentions", "count", 1000 },
	};

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		struct pprof *pp = pprof_new(ev[i].period);
		struct prof p;

		assert_non_null(pp);
		assert_int_equal(pprof_set_event_types(pp, ev[i].t1, ev[i].u1, ev[i].t2, ev[i].u2,
						       ev[i].pt, ev[i].pu),
				 0);
		assert_int_equal(pprof_add2(pp, stack_a, 3, 4096, 3, "java-main"), 0);
		assert_int_equal(pprof_add2(pp, stack_a, 3, 1000, 2, "java-main"), 0);
		/* A weight that rounded to nothing keeps its count of objects or contentions. */
		assert_int_equal(pprof_add2(pp, stack_b, 3, 0, 1, "java-main"), 0);
		assert_int_equal(pprof_add2(pp, stack_b, 3, 0, 0, "java-main"), -EINVAL);
		roundtrip(pp, &p);
		assert_int_equal(p.nst, 2);
		assert_string_equal(S(&p, p.st_type[0]), ev[i].t1);
		assert_string_equal(S(&p, p.st_unit[0]), ev[i].u1);
		assert_string_equal(S(&p, p.st_type[1]), ev[i].t2);
		assert_string_equal(S(&p, p.st_unit[1]), ev[i].u2);
		assert_string_equal(S(&p, p.pt_type), ev[i].pt);
		assert_string_equal(S(&p, p.pt_unit), ev[i].pu);
		assert_string_equal(S(&p, p.default_type), ev[i].t2);
		assert_int_equal(p.nsmp, 2);
		assert_int_equal(p.smp[0].nval, 2);
		assert_int_equal(p.smp[0].val[0], 5);
		assert_int_equal(p.smp[0].val[1], 5096 * (int64_t)ev[i].period);
		assert_int_equal(p.smp[1].val[0], 1);
		assert_int_equal(p.smp[1].val[1], 0);
		prof_free(&p);
		pprof_free(pp);
	}
}

static void test_comments_carry_the_labels(void **state)
{
	struct pprof *pp = pprof_new(PERIOD_NS);
	struct prof p;

	(void)state;
	assert_int_equal(pprof_add_comment(pp, "service=checkout"), 0);
	assert_int_equal(pprof_add_comment(pp, "host_pid=4242"), 0);
	assert_int_equal(pprof_add_comment(pp, ""), -EINVAL);
	assert_int_equal(pprof_add(pp, stack_a, 3, 1, NULL), 0);
	roundtrip(pp, &p);
	assert_int_equal(p.ncomment, 2);
	assert_string_equal(S(&p, p.comment[0]), "service=checkout");
	assert_string_equal(S(&p, p.comment[1]), "host_pid=4242");
	prof_free(&p);
	for (int i = 2; i < PPROF_MAX_COMMENTS; i++)
		assert_int_equal(pprof_add_comment(pp, "x"), 0);
	assert_int_equal(pprof_add_comment(pp, "one too many"), -ENOSPC);
	pprof_free(pp);
}

static void test_locations_are_leaf_first(void **state)
{
	struct pprof *pp = pprof_new(PERIOD_NS);
	struct prof p;

	(void)state;
	assert_int_equal(pprof_add(pp, stack_b, 4, 1, NULL), 0);
	roundtrip(pp, &p);
	assert_int_equal(p.smp[0].nloc, 4);
	for (size_t i = 0; i < 4; i++)
		assert_string_equal(loc_name(&p, p.smp[0].loc[i]), stack_b[3 - i]);
	prof_free(&p);
	pprof_free(pp);
}

static void test_functions_are_deduplicated_by_name(void **state)
{
	struct pprof *pp = pprof_new(PERIOD_NS);
	struct prof p;

	(void)state;
	assert_int_equal(pprof_add(pp, stack_a, 3, 1, NULL), 0);
	assert_int_equal(pprof_add(pp, stack_b, 4, 2, NULL), 0);
	roundtrip(pp, &p);
	/* java-main, Main::main, Foo::bar, Baz::qux */
	assert_int_equal(p.nfn, 4);
	assert_int_equal(p.nloc, 4);
	for (size_t i = 0; i < p.nfn; i++)
		for (size_t k = i + 1; k < p.nfn; k++) {
			assert_int_not_equal(p.fn_id[i], p.fn_id[k]);
			assert_string_not_equal(S(&p, p.fn_name[i]), S(&p, p.fn_name[k]));
		}
	/* Foo::bar is the leaf of one stack and a caller in the other: one location */
	assert_int_equal(p.smp[0].loc[0], p.smp[1].loc[0]);
	prof_free(&p);
	pprof_free(pp);
}

static void test_identical_stacks_merge_per_thread(void **state)
{
	struct pprof *pp = pprof_new(PERIOD_NS);
	struct prof p;
	bool seen_t1 = false, seen_t2 = false;

	(void)state;
	assert_int_equal(pprof_add(pp, stack_a, 3, 2, "worker-1"), 0);
	assert_int_equal(pprof_add(pp, stack_a, 3, 3, "worker-1"), 0);
	assert_int_equal(pprof_add(pp, stack_a, 3, 4, "worker-2"), 0);
	roundtrip(pp, &p);
	assert_int_equal(p.nsmp, 2);
	for (size_t i = 0; i < p.nsmp; i++) {
		assert_string_equal(S(&p, p.smp[i].label_key), "thread");
		if (strcmp(S(&p, p.smp[i].label_str), "worker-1") == 0) {
			seen_t1 = true;
			assert_int_equal(p.smp[i].val[0], 5);
		} else {
			assert_string_equal(S(&p, p.smp[i].label_str), "worker-2");
			seen_t2 = true;
			assert_int_equal(p.smp[i].val[0], 4);
		}
	}
	assert_true(seen_t1 && seen_t2);
	prof_free(&p);
	pprof_free(pp);
}

static void test_folded_line_is_split_root_first(void **state)
{
	static const char line[] = "java-main;com.example.Main::main_[j];com.example.Foo::bar_[j]";
	struct pprof *pp = pprof_new(PERIOD_NS);
	struct prof p;

	(void)state;
	assert_int_equal(pprof_add_folded(pp, line, strlen(line), 9, 1), 0);
	roundtrip(pp, &p);
	assert_int_equal(p.nsmp, 1);
	assert_int_equal(p.smp[0].nloc, 3);
	assert_string_equal(loc_name(&p, p.smp[0].loc[0]), "com.example.Foo::bar_[j]");
	assert_string_equal(loc_name(&p, p.smp[0].loc[2]), "java-main");
	assert_string_equal(S(&p, p.smp[0].label_str), "java-main");
	assert_int_equal(p.smp[0].val[0], 9);
	prof_free(&p);
	pprof_free(pp);
}

static void test_bad_samples_are_refused(void **state)
{
	const char *const with_null[] = { "a", NULL };
	const char *const with_empty[] = { "a", "" };
	struct pprof *pp = pprof_new(PERIOD_NS);
	char *big = malloc(PPROF_MAX_NAME + 2);
	const char *const with_big[] = { big };
	struct prof p;

	(void)state;
	assert_non_null(big);
	memset(big, 'x', PPROF_MAX_NAME + 1);
	big[PPROF_MAX_NAME + 1] = '\0';
	assert_int_equal(pprof_add(pp, stack_a, 0, 1, NULL), -EINVAL);
	assert_int_equal(pprof_add(pp, stack_a, 3, 0, NULL), -EINVAL);
	assert_int_equal(pprof_add(pp, stack_a, 3, -1, NULL), -EINVAL);
	assert_int_equal(pprof_add(pp, with_null, 2, 1, NULL), -EINVAL);
	assert_int_equal(pprof_add(pp, with_empty, 2, 1, NULL), -EINVAL);
	assert_int_equal(pprof_add(pp, with_big, 1, 1, NULL), -E2BIG);
	assert_int_equal(pprof_add(pp, stack_a, PPROF_MAX_DEPTH + 1, 1, NULL), -E2BIG);
	assert_int_equal(pprof_add_folded(pp, "a;;b", 4, 1, 0), -EINVAL);
	assert_int_equal(pprof_add_folded(pp, "", 0, 1, 0), -EINVAL);
	/* the refusals left a valid, empty profile */
	roundtrip(pp, &p);
	assert_int_equal(p.nsmp, 0);
	assert_int_equal(p.nfn, 0);
	prof_free(&p);
	free(big);
	pprof_free(pp);
}

static void test_many_names_keep_their_ids(void **state)
{
	struct pprof *pp = pprof_new(PERIOD_NS);
	uint8_t *raw;
	size_t len;
	char names[2000][32];

	(void)state;
	/* enough distinct names and stacks to grow every hash table several times */
	for (int i = 0; i < 2000; i++) {
		const char *fr[2] = { "root", names[i] };

		snprintf(names[i], sizeof(names[i]), "com.example.C%d::m_[j]", i);
		assert_int_equal(pprof_add(pp, fr, 2, 1, NULL), 0);
	}
	for (int i = 0; i < 2000; i++) {
		const char *fr[2] = { "root", names[i] };

		assert_int_equal(pprof_add(pp, fr, 2, 1, NULL), 0);
	}
	assert_int_equal(pprof_encode(pp, &raw, &len), 0);
	/* 2000 stacks, each counted twice: re-adding merged instead of appending */
	{
		struct pb b = { raw, raw + len }, sub;
		unsigned int wt;
		uint64_t v;
		size_t nsmp = 0, nfn = 0;

		while (b.p < b.end) {
			unsigned int f = pb_field(&b, &wt, &v, &sub);

			if (f == 2) {
				struct sample s;

				decode_sample(&sub, &s);
				assert_int_equal(s.val[0], 2);
				nsmp++;
			}
			nfn += f == 5;
		}
		assert_int_equal(nsmp, 2000);
		assert_int_equal(nfn, 2001);
	}
	free(raw);
	pprof_free(pp);
}

/* ---- --go: Debian's go tool pprof reads the file ---- */

static int run_go(void)
{
	static const char *const stacks[][4] = {
		{ "java-main", "com.example.Main::main_[j]", "com.example.Foo::bar_[j]", NULL },
		{ "java-main", "com.example.Main::main_[j]", "com.example.Baz::qux_[j]",
		  "com.example.Foo::bar_[j]" },
		{ "java-main", "com.example.Main::main_[j]", "java.util.HashMap::get_[i]", NULL },
	};
	static const int64_t counts[] = { 60, 30, 10 };
	char path[] = "/tmp/test_pprof_go.XXXXXX";
	char cmd[512], line[1024];
	struct pprof *pp;
	bool foo = false, baz = false, total = false;
	int fd, status;
	FILE *fp;

	if (access("/usr/bin/go", X_OK) != 0) {
		/* `make test` installs it: missing is a failure unless knowingly allowed. */
		const char *allow = getenv("FG_ALLOW_MISSING_TOOLS");

		if (allow && !strcmp(allow, "1")) {
			fprintf(stderr, "test_pprof --go: /usr/bin/go not installed (golang-go): "
					"skipped (FG_ALLOW_MISSING_TOOLS=1)\n");
			return 77;
		}
		fprintf(stderr, "test_pprof --go: FAIL: /usr/bin/go not installed (Debian package "
				"golang-go, installed by scripts/install-deps.sh); "
				"FG_ALLOW_MISSING_TOOLS=1 skips this test instead\n");
		return 1;
	}
	pp = pprof_new(10000000); /* 100 Hz: 100 samples = 1s */
	if (!pp)
		return 1;
	for (size_t i = 0; i < 3; i++) {
		size_t n = stacks[i][3] ? 4 : 3;

		if (pprof_add(pp, stacks[i], n, counts[i], "main") != 0)
			return 1;
	}
	fd = mkstemp(path);
	if (fd < 0 || pprof_write_gz(pp, fd) != 0)
		return 1;
	close(fd);
	pprof_free(pp);
	snprintf(cmd, sizeof(cmd),
		 "HOME=/tmp GOCACHE=/tmp/test_pprof_gocache GOFLAGS= /usr/bin/go tool pprof -top "
		 "-unit=ms -nodecount=50 %s 2>&1",
		 path);
	fp = popen(cmd, "r");
	if (!fp)
		return 1;
	while (fgets(line, sizeof(line), fp)) {
		fputs(line, stderr);
		/* flat 900 ms for Foo::bar (60 + 30 samples at 10 ms), 1 s in all */
		if (strstr(line, "com.example.Foo::bar_[j]") && strstr(line, "900ms"))
			foo = true;
		if (strstr(line, "com.example.Baz::qux_[j]"))
			baz = true;
		if (strstr(line, "100% of 1000ms total"))
			total = true;
	}
	status = pclose(fp);
	unlink(path);
	if (status != 0 || !foo || !baz || !total) {
		fprintf(stderr,
			"test_pprof --go: status %d, Foo::bar 900ms %d, Baz::qux %d, "
			"1000ms total %d\n",
			status, foo, baz, total);
		return 1;
	}
	fprintf(stderr, "test_pprof --go: go tool pprof read the profile\n");
	return 0;
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file_is_gzip_profile_with_cpu_sample_types),
		cmocka_unit_test(test_time_profiles_have_their_own_sample_type),
		cmocka_unit_test(test_event_profiles_have_two_sample_types),
		cmocka_unit_test(test_locations_are_leaf_first),
		cmocka_unit_test(test_comments_carry_the_labels),
		cmocka_unit_test(test_functions_are_deduplicated_by_name),
		cmocka_unit_test(test_identical_stacks_merge_per_thread),
		cmocka_unit_test(test_folded_line_is_split_root_first),
		cmocka_unit_test(test_bad_samples_are_refused),
		cmocka_unit_test(test_many_names_keep_their_ids),
	};

	if (argc == 2 && strcmp(argv[1], "--go") == 0)
		return run_go();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
