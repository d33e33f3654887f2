/* SPDX-License-Identifier: MIT */
/*
 * ctl.h - the root-only control channel of a `watch` daemon, used by `fgcollect record` to get
 * code tables when the daemon owns the agent socket. The daemon's side is ctl_server.h, the
 * record command's ctl_client.h; the frames they exchange are ctl_frame.h (private).
 *
 * Where: a SOCK_STREAM unix socket (default CTL_DEFAULT_PATH) in a directory that must be owned
 * by us and closed to group and others (0700); never in the directory shared with containers.
 * Peers are accepted only when SO_PEERCRED says uid 0 or our own uid.
 *
 *   client -> daemon   LIST                      -> JVM frames, then LIST_END
 *                      SUBSCRIBE host_pid (0=all) -> per matching JVM: a JVM frame, then RECORDS
 *                         frames with its history in time order (a HELLO, the VM_LAYOUT if
 *                         the agent sent one, every load with its original ts followed by its
 *                         CODE_FRAME and CODE_LINES if it has them, every unload with its ts,
 *                         then a DROPPED with the agent's drop counters so far),
 *                         then live RECORDS as the agent sends them; a JVM frame when a JVM
 *                         (re)connects; GONE when its connection ends (flags & CTL_GONE_EXITED
 *                         when the process is gone).
 *
 * Invariant: the daemon never blocks on a client: output is queued up to a cap, and a client
 * that lets it overflow is disconnected (counted).
 */
#ifndef FG_CTL_H
#define FG_CTL_H

#define CTL_DEFAULT_PATH "/run/fgcollect-ctl/ctl.sock"

#endif
