// SPDX-License-Identifier: MIT
/* cli_opt.c - numeric option arguments, the start-up privilege check (see cli_opt.h). */
#include "cli_opt.h"

#include "privs.h"
#include "util.h"

int cli_u64(const char *cmd, const char *opt, const char *arg, uint64_t lo, uint64_t hi,
	    const char *unit, uint64_t *out)
{
	if (fg_parse_u64(arg, lo, hi, out) == 0)
		return 1;
	fg_err(cmd, "--%s '%s' must be %llu..%llu%s%s", opt, arg, (unsigned long long)lo,
	       (unsigned long long)hi, unit ? " " : "", unit ? unit : "");
	return -1;
}

int cli_warn_privs(const char *cmd, bool offcpu)
{
	struct privs p;
	char line[512];
	int n = 0;

	if (privs_read("/proc", &p) != 0)
		return 0; /* no /proc: the sampler's own errors will say more */
	for (int need = 0; need < PRIVS_NNEEDS; need++) {
		if (privs_has(&p, (enum privs_need)need) || (need == PRIVS_BPF && !offcpu))
			continue;
		privs_explain(&p, (enum privs_need)need, line, sizeof(line));
		fg_err(cmd, "warning: %s", line);
		n++;
	}
	return n;
}
