// SPDX-License-Identifier: MIT
/* targets.c - the processes of a recording (see targets.h). */
#include "targets.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codetab.h"
#include "peer.h"
#include "util.h"

int targets_init(struct targets *ts)
{
	ts->n = 0;
	ts->v = calloc(SESSION_MAX_TARGETS, sizeof(*ts->v));
	return ts->v ? 0 : -ENOMEM;
}

void targets_fini(struct targets *ts)
{
	for (size_t i = 0; ts->v && i < ts->n; i++)
		codetab_free(ts->v[i].tab);
	free(ts->v);
	ts->v = NULL;
	ts->n = 0;
}

struct target *targets_find(const struct targets *ts, uint32_t pid)
{
	for (size_t i = 0; i < ts->n; i++)
		if (ts->v[i].pid == pid)
			return &ts->v[i];
	return NULL;
}

/* Whether pid maps a libjvm.so (a HotSpot JVM); unknown counts as yes. */
static bool maps_libjvm(uint32_t pid)
{
	char path[64], line[512];
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return true;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, "/libjvm.so") != NULL;
	fclose(f);
	return found;
}

struct target *targets_add(struct targets *ts, uint32_t pid, bool *added)
{
	struct target *t = targets_find(ts, pid);
	char path[64], comm[32];

	*added = false;
	if (t)
		return t;
	if (ts->n == SESSION_MAX_TARGETS)
		return NULL;
	t = &ts->v[ts->n++];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	if (fg_read_small(path, comm, sizeof(comm)) != 0)
		snprintf(comm, sizeof(comm), "pid");
	snprintf(t->root, sizeof(t->root), "%s-%u", comm, pid);
	t->jvm = maps_libjvm(pid);
	*added = true;
	return t;
}

int targets_scan_container(const char *prefix, int (*add)(void *arg, uint32_t pid), void *arg)
{
	size_t plen = strlen(prefix);
	struct dirent *de;
	DIR *d = opendir("/proc");

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		struct peer_info pi;
		char exe[64], buf[8];
		uint64_t pid;

		if (fg_parse_u64(de->d_name, 1, UINT32_MAX, &pid) != 0)
			continue;
		if (peer_read("/proc", (uint32_t)pid, &pi) != 0 || !pi.container_id[0])
			continue;
		if (strncmp(pi.container_id, prefix, plen) != 0)
			continue;
		/* Kernel threads have no address space to sample. */
		snprintf(exe, sizeof(exe), "/proc/%u/exe", (unsigned)pid);
		if (readlink(exe, buf, sizeof(buf)) < 0)
			continue;
		if (add(arg, (uint32_t)pid) != 0)
			break;
	}
	closedir(d);
	return 0;
}
