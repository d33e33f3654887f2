// SPDX-License-Identifier: MIT OR GPL-2.0
/*
 * pidfilter.bpf.c - keep a CPU-wide perf event's samples of the target processes only, decided
 * in the kernel (see pidfilter.h).
 *
 * The kernel's overflow handler (bpf_overflow_handler) runs the program before the sample is
 * prepared: the call chain is walked and the user stack copied only when it returns non-zero.
 *
 * Invariant: no loop, no lock; one map lookup per sample.
 */
#include <linux/bpf.h>
#include <linux/types.h>

#include <bpf/bpf_helpers.h>

/*
 * The target processes (tgid in the initial PID namespace -> 1), filled by pidfilter.c, which
 * sizes it (PIDFILTER_MAX) before the load.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, __u32);
} fg_pids SEC(".maps");

SEC("perf_event")
int fg_pidfilter(void *ctx)
{
	__u32 tgid = (__u32)(bpf_get_current_pid_tgid() >> 32);

	(void)ctx;
	return bpf_map_lookup_elem(&fg_pids, &tgid) ? 1 : 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
