// SPDX-License-Identifier: MIT
/*
 * profdir_fixture DIR SVG FOLDED - write a profile directory with a known content for the
 * browser check of index.html: container aaaa... (service checkout, PID 101) at +0, +60, +120 s,
 * container bbbb... (billing, PID 202) at +30, +90 s and a host process (batch, PID 303) at
 * +10 s, each with the given SVG and folded files. Exit 0, or 1 with a message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profdir.h"
#include "util.h"

#define T0 1795335000 /* 2026-11-22 08:10:00 UTC */

int main(int argc, char **argv)
{
	static const struct {
		const char *svc, *cid;
		unsigned pid;
		int t;
	} sets[] = {
		{ "checkout", "aaaaaaaaaaaa0000000000000000000000000000000000000000000000000001",
		  101, 0 },
		{ "batch", "", 303, 10 },
		{ "billing", "bbbbbbbbbbbb0000000000000000000000000000000000000000000000000002",
		  202, 30 },
		{ "checkout", "aaaaaaaaaaaa0000000000000000000000000000000000000000000000000001",
		  101, 60 },
		{ "billing", "bbbbbbbbbbbb0000000000000000000000000000000000000000000000000002",
		  202, 90 },
		{ "checkout", "aaaaaaaaaaaa0000000000000000000000000000000000000000000000000001",
		  101, 120 },
	};
	struct profdir_opts o = { 0 };
	struct profdir *d;
	char *svg, *folded;
	size_t svg_len, folded_len;
	int rv;

	if (argc != 4) {
		fprintf(stderr, "usage: profdir_fixture DIR SVG FOLDED\n");
		return 64;
	}
	o.path = argv[1];
	if (fg_read_file(argv[2], 1 << 16, 1 << 26, &svg, &svg_len) != 0 ||
	    fg_read_file(argv[3], 1 << 12, 1 << 26, &folded, &folded_len) != 0) {
		fprintf(stderr, "profdir_fixture: cannot read %s or %s\n", argv[2], argv[3]);
		return 1;
	}
	if ((rv = profdir_open(&o, &d)) != 0) {
		fprintf(stderr, "profdir_fixture: %s: %s\n", argv[1], strerror(-rv));
		return 1;
	}
	for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
		struct profdir_prof p = { .start_unix = T0 + sets[i].t,
					  .end_unix = T0 + sets[i].t + 30,
					  .samples = 1000 + (uint64_t)i,
					  .freq_hz = 99,
					  .folded = folded,
					  .folded_len = folded_len,
					  .svg = svg,
					  .svg_len = svg_len };

		prof_labels_set(&p.labels, sets[i].svc, sets[i].cid, sets[i].pid, "node1");
		if ((rv = profdir_add(d, &p)) != 0) {
			fprintf(stderr, "profdir_fixture: add: %s\n", strerror(-rv));
			return 1;
		}
	}
	profdir_close(d);
	free(svg);
	free(folded);
	return 0;
}
