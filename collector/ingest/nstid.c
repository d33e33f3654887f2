// SPDX-License-Identifier: MIT
/* nstid.c - a JVM's namespace thread ids -> host tids through its own tasks (see nstid.h). */
#include "nstid.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>

#include "peer.h"
#include "util.h"

void nstid_init(struct nstid *m, const char *proc_root, uint32_t host_pid)
{
	*m = (struct nstid){ .proc_root = proc_root ? proc_root : "/proc", .host_pid = host_pid };
	htab_init(&m->map);
}

void nstid_fini(struct nstid *m)
{
	htab_fini(&m->map);
}

/* The namespace tid of host task tid, from its status' NSpid line: 0 or a negative errno. */
static int task_nstid(const struct nstid *m, uint32_t tid, uint32_t *ns_tid)
{
	char path[256], buf[4096];
	uint32_t depth;
	int rv;

	snprintf(path, sizeof(path), "%s/%u/task/%u/status", m->proc_root, m->host_pid, tid);
	if ((rv = fg_read_small(path, buf, sizeof(buf))) != 0)
		return rv;
	return peer_parse_nspid(buf, ns_tid, &depth);
}

static uint64_t pack(uint32_t host_tid, uint64_t now)
{
	return host_tid | (now >> 24) << 32;
}

/* Read every task of the process: the map becomes what /proc says now. */
static void scan(struct nstid *m, uint64_t now)
{
	char path[256];
	struct dirent *de;
	unsigned read = 0;
	DIR *d;

	m->last_scan = now ? now : 1;
	m->st.scans++;
	snprintf(path, sizeof(path), "%s/%u/task", m->proc_root, m->host_pid);
	if (!(d = opendir(path)))
		return;
	htab_clear(&m->map);
	while ((de = readdir(d)) && read < NSTID_MAX) {
		uint64_t tid;
		uint32_t ns;

		if (fg_parse_u64(de->d_name, 1, UINT32_MAX, &tid) != 0)
			continue;
		read++;
		if (task_nstid(m, (uint32_t)tid, &ns) == 0 && ns)
			(void)htab_put(&m->map, ns, pack((uint32_t)tid, now));
	}
	closedir(d);
}

int nstid_lookup(struct nstid *m, uint32_t ns_tid, uint64_t now, uint32_t *host_tid)
{
	uint64_t *v = ns_tid ? htab_get(&m->map, ns_tid) : NULL;
	uint32_t ns;

	if (v && now - ((*v >> 32) << 24) < NSTID_CHECK_NS) {
		m->st.hits++;
		*host_tid = (uint32_t)*v;
		return 0;
	}
	if (v) {
		/* Checked a while ago: is that task still the agent's ns_tid? */
		if (task_nstid(m, (uint32_t)*v, &ns) == 0 && ns == ns_tid) {
			*v = pack((uint32_t)*v, now);
			m->st.hits++;
			*host_tid = (uint32_t)*v;
			return 0;
		}
		m->st.stale++;
		htab_remove(&m->map, v);
	}
	m->st.misses++;
	if (!ns_tid || (m->last_scan && now - m->last_scan < NSTID_RESCAN_NS)) {
		m->st.refused++;
		return -ENOENT;
	}
	scan(m, now);
	v = htab_get(&m->map, ns_tid);
	if (!v)
		return -ENOENT;
	*host_tid = (uint32_t)*v;
	return 0;
}
