// SPDX-License-Identifier: MIT
/*
 * test_flame_svg.c - SVG output (flame_svg): escaping of hostile names and options, well-formed
 * XML checked by a real parser (python3's xml.dom.minidom), label truncation, errors.
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

#include "flame_lines.h"
#include "flame_svg.h"

/*
 * The SVG as a string (the caller frees it). Copied out of the memstream's buffer: returning
 * that buffer itself makes GCC 12 at -O2/-O3 believe callers use a pointer to the local that
 * open_memstream() was given (-Wdangling-pointer false positive).
 */
static char *render(const struct flame *f, const struct flame_opts *o, int want)
{
	char *buf = NULL, *svg;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	assert_non_null(m);
	assert_int_equal(flame_render_svg(f, o, m), want);
	fclose(m);
	svg = strdup(buf);
	free(buf);
	assert_non_null(svg);
	return svg;
}

/* Parse with a real XML parser; also require valid UTF-8 and no C0 control bytes. */
static void assert_well_formed(const char *svg)
{
	char path[] = "/tmp/fg_svg_XXXXXX", cmd[256];
	int fd = mkstemp(path);
	FILE *f;

	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fputs(svg, f);
	fclose(f);
	snprintf(
		cmd, sizeof(cmd),
		"python3 -c 'import sys, xml.dom.minidom as m; d = open(sys.argv[1], \"rb\").read(); "
		"d.decode(\"utf-8\"); m.parseString(d)' %s",
		path);
	assert_int_equal(system(cmd), 0);
	unlink(path);
	for (const unsigned char *p = (const unsigned char *)svg; *p; p++)
		assert_false(*p < 0x20 && *p != '\n' && *p != '\t');
}

static void test_hostile_names_stay_well_formed(void **state)
{
	static const char *const names[] = {
		"a&b<c>d\"e'f",
		"]]>",
		"<!--x-->",
		"</title></g></svg>",
		"ctl\x01\x1b\x7fz",
		"bad\xff\xfe utf8",
		"\xc0\xaf overlong",
		"\xed\xa0\x80 surrogate",
		"\xef\xbf\xbe nonchar",
		"tab\there",
		"caf\xc3\xa9 \xe6\x97\xa5\xf0\x9f\x94\xa5",
		"&amp;already",
		"_[j]",
		"x_[k]",
	};
	struct flame *f = flame_new();
	struct flame_opts o;
	char *long_name = malloc(100001), *svg;
	const char *st[2];

	(void)state;
	memset(long_name, 'L', 100000);
	long_name[100000] = '\0';
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		st[0] = "root";
		st[1] = names[i];
		assert_int_equal(flame_add(f, st, 2, 10 + i), 0);
	}
	st[1] = long_name;
	assert_int_equal(flame_add(f, st, 2, 500), 0);
	flame_opts_init(&o);
	o.title = "<script>alert(1)</script> ]]> & \"t\"";
	o.subtitle = "sub\x02\xff";
	o.notes = "a--b-->c-";
	o.countname = "s\"'</>]]>";
	o.nametype = "F\"\\u2028\n]]>:";
	o.fonttype = "Verdana;}</style><script>";
	svg = render(f, &o, 0);
	assert_well_formed(svg);
	assert_non_null(strstr(svg, "a&amp;b&lt;c&gt;d&quot;e'f ("));
	assert_non_null(strstr(svg, "bad\xef\xbf\xbd\xef\xbf\xbd utf8"));
	assert_null(strstr(svg, "<script>alert"));
	assert_null(strstr(svg, "</style><script>"));
	/* one CDATA section, closed once: no name or option text inside it */
	assert_non_null(strstr(svg, "]]>\n</script>"));
	{
		int ends = 0;

		for (const char *p = svg; (p = strstr(p, "]]>")) != NULL; p += 3)
			ends++;
		assert_int_equal(ends, 1);
	}
	free(svg);
	free(long_name);
	flame_free(f);
}

static void test_escape_replaces_what_xml_cannot_carry(void **state)
{
	static const struct {
		const char *in;
		bool attr;
		const char *out;
	} cases[] = {
		{ "a&b<c>d\"e", true, "a&amp;b&lt;c&gt;d&quot;e" },
		{ "a\"b", false, "a\"b" },
		{ "x\xffy", false, "x\xef\xbf\xbdy" },
		{ "\x01\x1f\t", false, "\xef\xbf\xbd\xef\xbf\xbd\t" },
		{ "\xc3\xa9", false, "\xc3\xa9" },
		{ "\xef\xbf\xbf", false, "\xef\xbf\xbd" },
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *buf = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&buf, &len);

		assert_int_equal(
			flame_svg_escape(m, cases[i].in, strlen(cases[i].in), cases[i].attr), 0);
		fclose(m);
		assert_string_equal(buf, cases[i].out);
		free(buf);
	}
}

static void test_long_names_truncate_labels_not_titles(void **state)
{
	struct flame *f = flame_new();
	struct flame_opts o;
	char name[400], *svg, *t, want[64];
	const char *st[1] = { name };

	(void)state;
	for (size_t i = 0; i < sizeof(name) - 1; i++)
		name[i] = (char)('a' + i % 26);
	name[sizeof(name) - 1] = '\0';
	assert_int_equal(flame_add(f, st, 1, 1), 0);
	flame_opts_init(&o);
	svg = render(f, &o, 0);
	assert_non_null(strstr(svg, name)); /* full name in the title */
	/* label: int(1180 / (12 * 0.59)) = 166 characters, the last two "..": 164 + ".." */
	t = strstr(svg, "<text  x=\"13.00\" y=\"47.5\" >");
	assert_non_null(t);
	t += strlen("<text  x=\"13.00\" y=\"47.5\" >");
	assert_int_equal(strcspn(t, "<"), 166);
	memcpy(want, name + 160, 4);
	memcpy(want + 4, "..</text>", 10);
	assert_memory_equal(t + 160, want, strlen(want));
	free(svg);
	flame_free(f);
}

static void test_no_samples_writes_an_error_svg(void **state)
{
	struct flame *f = flame_new();
	struct flame_opts o;
	char *svg;

	(void)state;
	assert_int_equal(add_folded(f, "a;b 0"), 0);
	flame_opts_init(&o);
	svg = render(f, &o, -ENODATA);
	assert_non_null(strstr(svg, "ERROR: no stack counts"));
	assert_well_formed(svg);
	free(svg);
	flame_free(f);
}

static void test_invalid_options_are_refused(void **state)
{
	struct flame *f = flame_new();
	struct flame_opts o;
	char *svg;

	(void)state;
	assert_int_equal(add_folded(f, "a 1"), 0);
	flame_opts_init(&o);
	o.width = 20;
	svg = render(f, &o, -EINVAL);
	assert_string_equal(svg, "");
	free(svg);
	flame_opts_init(&o);
	o.bgcolors = "url(javascript:x)";
	svg = render(f, &o, -EINVAL);
	free(svg);
	flame_free(f);
}

static void test_diff_titles_carry_the_delta(void **state)
{
	struct flame *f = flame_new();
	struct flame_opts o;
	char *svg;

	(void)state;
	assert_int_equal(add_folded(f, "a;b 10 30"), 0);
	assert_int_equal(add_folded(f, "a;c 50 20"), 0);
	flame_opts_init(&o);
	svg = render(f, &o, 0);
	assert_non_null(strstr(svg, "<title>b (30 samples, 60.00%; +40.00%)</title>"));
	assert_non_null(strstr(svg, "<title>c (20 samples, 40.00%; -60.00%)</title>"));
	assert_non_null(strstr(svg, "<title>a (50 samples, 100.00%; 0.00%)</title>"));
	free(svg);
	o.negate = true;
	svg = render(f, &o, 0);
	assert_non_null(strstr(svg, "<title>b (30 samples, 60.00%; -40.00%)</title>"));
	assert_non_null(strstr(svg, "<title>a (50 samples, 100.00%; 0.00%)</title>"));
	free(svg);
	flame_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hostile_names_stay_well_formed),
		cmocka_unit_test(test_escape_replaces_what_xml_cannot_carry),
		cmocka_unit_test(test_long_names_truncate_labels_not_titles),
		cmocka_unit_test(test_no_samples_writes_an_error_svg),
		cmocka_unit_test(test_invalid_options_are_refused),
		cmocka_unit_test(test_diff_titles_carry_the_delta),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
