// SPDX-License-Identifier: MIT
/* privs.c - the capabilities sampling needs, and whether we hold them (see privs.h). */
#include "privs.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* A small signed decimal file, or PRIVS_UNKNOWN. */
static int read_int(const char *proc, const char *name)
{
	char path[256], buf[32], *end;
	long v;

	snprintf(path, sizeof(path), "%s/sys/kernel/%s", proc, name);
	if (fg_read_small(path, buf, sizeof(buf)) != 0)
		return PRIVS_UNKNOWN;
	v = strtol(buf, &end, 10);
	if (end == buf || v < -100 || v > 100)
		return PRIVS_UNKNOWN;
	return (int)v;
}

int privs_read(const char *proc, struct privs *p)
{
	char path[256], line[256];
	bool found = false;
	FILE *f;

	memset(p, 0, sizeof(*p));
	snprintf(path, sizeof(path), "%s/self/status", proc);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (!found && fgets(line, sizeof(line), f)) {
		char *end;

		if (strncmp(line, "CapEff:", 7) != 0)
			continue;
		p->cap_eff = strtoull(line + 7, &end, 16);
		found = end != line + 7;
	}
	fclose(f);
	if (!found)
		return -EIO;
	p->cap_last_cap = read_int(proc, "cap_last_cap");
	p->perf_event_paranoid = read_int(proc, "perf_event_paranoid");
	p->kptr_restrict = read_int(proc, "kptr_restrict");
	return 0;
}

static bool cap(const struct privs *p, int c)
{
	return (p->cap_eff >> c) & 1u;
}

static int paranoid(const struct privs *p)
{
	return p->perf_event_paranoid == PRIVS_UNKNOWN ? 2 : p->perf_event_paranoid;
}

static int kptr(const struct privs *p)
{
	return p->kptr_restrict == PRIVS_UNKNOWN ? 0 : p->kptr_restrict;
}

bool privs_has(const struct privs *p, enum privs_need need)
{
	switch (need) {
	case PRIVS_PERF:
		return cap(p, PRIVS_CAP_PERFMON) || cap(p, PRIVS_CAP_SYS_ADMIN) || paranoid(p) <= 1;
	case PRIVS_PTRACE:
		return cap(p, PRIVS_CAP_SYS_PTRACE);
	case PRIVS_SYSLOG:
		if (kptr(p) >= 2)
			return false;
		return cap(p, PRIVS_CAP_SYSLOG) || (kptr(p) <= 0 && paranoid(p) <= 1);
	case PRIVS_BPF:
		return cap(p, PRIVS_CAP_BPF) || cap(p, PRIVS_CAP_SYS_ADMIN);
	default:
		return true;
	}
}

int privs_explain(const struct privs *p, enum privs_need need, char *buf, size_t len)
{
	switch (need) {
	case PRIVS_PERF:
		/* The kernel's list ends before CAP_PERFMON: only SYS_ADMIN exists. */
		if (p->cap_last_cap != PRIVS_UNKNOWN && p->cap_last_cap < PRIVS_CAP_PERFMON)
			return snprintf(
				buf, len,
				"no CAP_SYS_ADMIN at kernel.perf_event_paranoid %d: "
				"perf_event_open of other processes will be refused; this "
				"kernel (before Linux 5.8) has no CAP_PERFMON: add CAP_SYS_ADMIN "
				"(--cap-add SYS_ADMIN) or set kernel.perf_event_paranoid to 1 "
				"on the host",
				paranoid(p));
		return snprintf(
			buf, len,
			"no CAP_PERFMON (nor CAP_SYS_ADMIN) at kernel.perf_event_paranoid "
			"%d: perf_event_open of other processes will be refused; add "
			"CAP_PERFMON (--cap-add PERFMON; Docker Engine before 23.0 does not "
			"know it: --cap-add SYS_ADMIN there) or set "
			"kernel.perf_event_paranoid to 1 on the host",
			paranoid(p));
	case PRIVS_PTRACE:
		return snprintf(buf, len,
				"no CAP_SYS_PTRACE: /proc/<pid>/maps and /proc/<pid>/root of other "
				"users' processes will be refused, their native frames [unknown]; "
				"add CAP_SYS_PTRACE (--cap-add SYS_PTRACE)");
	case PRIVS_SYSLOG:
		if (kptr(p) >= 2)
			return snprintf(
				buf, len,
				"kernel.kptr_restrict is %d: /proc/kallsyms shows no "
				"addresses, kernel frames will be [unknown]; set it to 1 on the "
				"host and add CAP_SYSLOG (--cap-add SYSLOG)",
				kptr(p));
		return snprintf(
			buf, len,
			"no CAP_SYSLOG at kernel.kptr_restrict %d, "
			"kernel.perf_event_paranoid %d: /proc/kallsyms shows no addresses, "
			"kernel frames will be [unknown]; add CAP_SYSLOG (--cap-add SYSLOG)",
			kptr(p), paranoid(p));
	case PRIVS_BPF:
		if (p->cap_last_cap != PRIVS_UNKNOWN && p->cap_last_cap < PRIVS_CAP_BPF)
			return snprintf(
				buf, len,
				"no CAP_SYS_ADMIN: off-CPU and wall stacks will be taken by "
				"perf events per thread, which cost the target at each "
				"context switch, not in the kernel by BPF; this kernel "
				"(before Linux 5.8) has no CAP_BPF: add CAP_SYS_ADMIN "
				"(--cap-add SYS_ADMIN)");
		return snprintf(buf, len,
				"no CAP_BPF (nor CAP_SYS_ADMIN): off-CPU and wall stacks will be "
				"taken by perf events per thread, which cost the target at each "
				"context switch, not in the kernel by BPF; add CAP_BPF (--cap-add "
				"BPF; Docker Engine before 23.0 does not know it: --cap-add "
				"SYS_ADMIN there)");
	default:
		return snprintf(buf, len, "?");
	}
}
