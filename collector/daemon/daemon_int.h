/* SPDX-License-Identifier: MIT */
/*
 * daemon_int.h - what the daemon's files share: its log line and its rolling profiles.
 */
#ifndef FG_DAEMON_INT_H
#define FG_DAEMON_INT_H

#include "daemon.h"
#include "labels.h"
#include "util.h"

/* One log line to o->log (util.h's fg_say: cut at 4 KiB). */
#define daemon_say(o, ...) fg_say((o)->log, (o)->log_arg, __VA_ARGS__)

/* The rolling profiles of `watch --profile-every`. */
struct daemon_profiles {
	struct profdir *dir;
	struct push *push;
	struct roller *roller[FG_NEVENTS]; /* one per event asked for */
	char host[65];			   /* this host's name, when o->host_name is NULL */
};

/* Start the rolling profiles: directory, pusher, then the sampling threads. 0 or -errno (logged).
 */
int daemon_profiles_start(const struct daemon_opts *o, struct daemon_profiles *p);

/* Stop the rollers (each cuts its last interval), then the pusher and the directory; log their
 * counters. Nothing started is fine. */
void daemon_profiles_stop(const struct daemon_opts *o, struct daemon_profiles *p);

#endif
