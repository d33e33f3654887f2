// SPDX-License-Identifier: MIT
/* cli_opt.c - numeric option arguments (see cli_opt.h). */
#include "cli_opt.h"

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
