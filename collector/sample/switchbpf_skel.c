// SPDX-License-Identifier: MIT
/*
 * switchbpf_skel.c - the calls into the skeleton bpftool generates from bpf/switch.bpf.c, kept
 * in a file of their own: the generated code is libbpf's, not ours, and the static analysis
 * that lints ours (scripts/lint.sh) does not follow its memory through libbpf.
 */
#include "switchbpf_skel.h"

struct switch_bpf *switchbpf_skel_open(void)
{
	return switch_bpf__open();
}

int switchbpf_skel_load(struct switch_bpf *s)
{
	return switch_bpf__load(s);
}

void switchbpf_skel_destroy(struct switch_bpf *s)
{
	switch_bpf__destroy(s);
}
