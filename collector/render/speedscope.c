// SPDX-License-Identifier: MIT
/*
 * speedscope.c - a recording in speedscope's file format (timeview.h): the frames shared, one
 * "sampled" profile per thread whose samples (frame indices, root first) come in time order,
 * so speedscope's time-order view shows when each ran.
 *
 * Invariant: a profile's samples and weights have the same length, and every index names a
 * frame of shared.frames.
 */
#include "timeview.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "timeline.h"

/* The stack of node, root first, written as a JSON array of frame ids. */
static void put_stack(FILE *f, const struct timeline *tl, uint32_t node, uint32_t *buf)
{
	size_t n = 0;

	while (node && n < STACKAGG_MAX_FRAMES) {
		buf[n++] = tl->nodes[node].frame;
		node = tl->nodes[node].parent;
	}
	fputc('[', f);
	while (n-- > 0)
		fprintf(f, "%u%s", buf[n], n ? "," : "");
	fputc(']', f);
}

static const char *ss_unit(const struct timeview_opts *o)
{
	if (o->sample_us > 0 || (o->unit && !strcmp(o->unit, "us")))
		return "microseconds";
	if (o->unit && !strcmp(o->unit, "bytes"))
		return "bytes";
	return "none";
}

static void put_profile(FILE *f, const struct timeline *tl, const struct timeline_thread *th,
			const struct timeview_opts *o, uint32_t *buf)
{
	double total = 0;

	for (size_t i = th->first; i < th->first + th->n; i++)
		total += o->sample_us > 0 ? o->sample_us : (double)tl->ev[i].weight;
	fputs("{\"type\":\"sampled\",\"name\":", f);
	if (th->name[0]) {
		char name[256];

		snprintf(name, sizeof(name), "%s [tid %u]", th->name, th->tid);
		timeview_json_str(f, name);
	} else {
		fprintf(f, "\"[tid %u]\"", th->tid);
	}
	fputs(",\"unit\":", f);
	timeview_json_str(f, ss_unit(o));
	fprintf(f, ",\"startValue\":0,\"endValue\":%.17g,\"samples\":[", total);
	for (size_t i = th->first; i < th->first + th->n; i++) {
		if (i > th->first)
			fputc(',', f);
		put_stack(f, tl, tl->ev[i].node, buf);
	}
	fputs("],\"weights\":[", f);
	for (size_t i = th->first; i < th->first + th->n; i++) {
		if (o->sample_us > 0)
			fprintf(f, "%s%.17g", i > th->first ? "," : "", o->sample_us);
		else
			fprintf(f, "%s%llu", i > th->first ? "," : "",
				(unsigned long long)tl->ev[i].weight);
	}
	fputs("]}", f);
}

int timeview_write_speedscope(const struct stackagg *a, const struct timeview_opts *o, FILE *f)
{
	struct stackagg_labels *labels = stackagg_labels_new(a);
	uint32_t *buf = malloc(STACKAGG_MAX_FRAMES * sizeof(*buf));
	size_t nf = stackagg_frame_count(a);
	struct timeline tl;
	int rv = -ENOMEM;

	if (!labels || !buf)
		goto out;
	if ((rv = timeline_build(&tl, a, labels, o->roots, o->thread_root)) != 0)
		goto out;
	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
	      "\"exporter\":\"fgcollect\",\"name\":",
	      f);
	timeview_json_str(f, o->title ? o->title : "fgcollect");
	fputs(",\"activeProfileIndex\":0,\"shared\":{\"frames\":[", f);
	for (size_t i = 0; i < nf; i++) {
		const char *s = stackagg_labels_get(labels, (uint32_t)i);

		fputs(i ? ",{\"name\":" : "{\"name\":", f);
		timeview_json_str(f, s ? s : "[unknown]");
		fputc('}', f);
	}
	fputs("]},\"profiles\":[", f);
	for (size_t t = 0; t < tl.nthreads; t++) {
		if (t)
			fputc(',', f);
		put_profile(f, &tl, &tl.threads[t], o, buf);
	}
	fputs("]}\n", f);
	rv = ferror(f) ? -EIO : 0;
	timeline_fini(&tl);
out:
	free(buf);
	stackagg_labels_free(labels);
	return rv;
}
