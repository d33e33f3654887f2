// SPDX-License-Identifier: MIT
/*
 * bpf_skel.c - the calls into the skeletons bpftool generates from bpf/switch.bpf.c and
 * bpf/pidfilter.bpf.c, kept in a file of their own: the generated code is libbpf's, not ours,
 * and the static analysis that lints ours (scripts/lint.sh) does not follow its memory through
 * libbpf.
 */
#include "bpf_skel.h"

/* PREFIX_open, PREFIX_load and PREFIX_destroy: SKEL__open, SKEL__load and SKEL__destroy. */
#define SKEL_CALLS(SKEL, PREFIX)                                                                   \
	struct SKEL *PREFIX##_open(void)                                                           \
	{                                                                                          \
		return SKEL##__open();                                                             \
	}                                                                                          \
	int PREFIX##_load(struct SKEL *s)                                                          \
	{                                                                                          \
		return SKEL##__load(s);                                                            \
	}                                                                                          \
	void PREFIX##_destroy(struct SKEL *s)                                                      \
	{                                                                                          \
		SKEL##__destroy(s);                                                                \
	}

SKEL_CALLS(switch_bpf, switchbpf_skel)
SKEL_CALLS(pidfilter_bpf, pidfilter_skel)
