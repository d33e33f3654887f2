// SPDX-License-Identifier: MIT
/*
 * profiles.c - the daemon's rolling profiles (`watch --profile-every`): the profile directory,
 * the Pyroscope pusher and one roller per event, started after the sockets and stopped before
 * the control server closes (see daemon_int.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "daemon_int.h"
#include "profdir.h"
#include "push.h"
#include "roller.h"

static void roller_log(void *arg, const char *line)
{
	const struct daemon_opts *o = arg;

	o->log(o->log_arg, line);
}

int daemon_profiles_start(const struct daemon_opts *o, struct daemon_profiles *p)
{
	struct profdir **dir = &p->dir;
	struct push **push = &p->push;
	struct roller **roller = p->roller;
	const char *host_name = o->host_name;
	char evs[64] = "";
	int rv;

	if (!host_name) {
		if (gethostname(p->host, sizeof(p->host) - 1) != 0)
			snprintf(p->host, sizeof(p->host), "unknown");
		host_name = p->host;
	}
	if (o->out_dir) {
		struct profdir_opts po = { .path = o->out_dir,
					   .keep = (size_t)o->keep_profiles,
					   .max_bytes = o->max_bytes,
					   .view_pages = true };

		if ((rv = profdir_open(&po, dir)) != 0) {
			daemon_say(
				o, "cannot use %s for profiles: %s%s", o->out_dir, strerror(-rv),
				rv == -EPERM
					? " (it must be a directory owned by us that nobody else "
					  "can write, not a symlink)"
					: "");
			return rv;
		}
	}
	if (o->push_url) {
		struct push_opts pu = { .url = o->push_url,
					.app = o->push_app,
					.max_queue = (size_t)o->push_queue };

		if ((rv = push_open(&pu, push)) != 0) {
			daemon_say(o, "cannot push to %s: %s", o->push_url,
				   rv == -ELIBACC ? push_unavailable() : strerror(-rv));
			return rv;
		}
	}
	for (unsigned ev = 0, first = 1; ev < FG_NEVENTS; ev++) {
		struct roller_opts ro = { .ctl_path = o->ctl,
					  .interval_ns = o->profile_ns,
					  .freq_hz = (unsigned)o->freq,
					  .pprof_files = o->pprof,
					  .dir = *dir,
					  .push = *push,
					  .hostname = host_name,
					  .dir_name = o->out_dir,
					  .push_url = o->push_url,
					  .log = roller_log,
					  .log_arg = (void *)o,
					  /* connects and exits said once, by the first */
					  .verbose = !o->quiet && first,
					  .event = ev,
					  .min_block_ns = o->min_block_ns,
					  .switch_period = (unsigned)o->switch_period,
					  .switch_rate = (unsigned)o->switch_rate,
					  .merge_threads = o->merge_threads,
					  .alloc_interval = o->alloc_interval,
					  .alloc_depth = (unsigned)o->alloc_depth,
					  .lock_threshold_us = o->lock_threshold_us,
					  .alloc_budget_ppm = o->alloc_budget_ppm };

		if (!(o->events & (1u << ev)))
			continue;
		/* One sampling session (a control-channel client) per event. */
		if ((rv = roller_start(&ro, &roller[ev])) != 0) {
			daemon_say(o, "cannot start the profiling thread of %s: %s",
				   prof_event_name((enum fg_event)ev), strerror(-rv));
			return rv;
		}
		snprintf(evs + strlen(evs), sizeof(evs) - strlen(evs), "%s%s", first ? "" : ",",
			 prof_event_name((enum fg_event)ev));
		first = 0;
	}
	if (!o->quiet)
		daemon_say(o, "rolling profiles every %.0f s (%s)%s%s%s%s (host %s)",
			   (double)o->profile_ns / 1e9, evs, o->out_dir ? " to " : "",
			   o->out_dir ? o->out_dir : "", o->push_url ? ", pushed to " : "",
			   o->push_url ? o->push_url : "", host_name);
	return 0;
}

void daemon_profiles_stop(const struct daemon_opts *o, struct daemon_profiles *p)
{
	struct roller **roller = p->roller;
	struct profdir *dir = p->dir;
	struct push *push = p->push;
	struct roller_stats rs = { 0 };
	struct profdir_stats ds = { 0 };
	struct push_stats ps = { 0 };
	bool any = false;
	char times[400] = "";

	for (unsigned ev = 0; ev < FG_NEVENTS; ev++) {
		struct roller_stats one;

		if (!roller[ev])
			continue;
		roller_stop(roller[ev], &one); /* cuts the last interval */
		roller[ev] = NULL;
		if (!any)
			rs.intervals = one.intervals; /* the rollers cut the same intervals */
		any = true;
		rs.profiles += one.profiles;
		if (ev == FG_EVENT_CPU) {
			rs.samples += one.samples;
			rs.other_samples += one.other_samples;
		} else if (evkind_of(ev)->from_agent) {
			/* Bytes (alloc, live) or microseconds waited (lock). */
			snprintf(times + strlen(times), sizeof(times) - strlen(times),
				 ev == FG_EVENT_LOCK ? ", %s %.3f s waited in %llu profiles"
						     : ", %s %.1f MiB in %llu profiles",
				 prof_event_name((enum fg_event)ev),
				 ev == FG_EVENT_LOCK ? (double)one.samples / 1e6
						     : (double)one.samples / 1048576.0,
				 (unsigned long long)one.profiles);
		} else {
			/* Time profiles count microseconds, not samples. */
			snprintf(times + strlen(times), sizeof(times) - strlen(times),
				 ", %s %.3f s in %llu profiles", prof_event_name((enum fg_event)ev),
				 (double)one.samples / 1e6, (unsigned long long)one.profiles);
		}
		rs.write_errors += one.write_errors;
	}
	if (!any) {
		push_close(push, 0, NULL);
		profdir_close(dir);
		return;
	}
	if (push) {
		push_close(push, 2000, &ps);
		daemon_say(
			o,
			"push: %llu profiles sent, %llu failed attempts (retried), %llu dropped with "
			"the queue full, %llu rejected by the server, %llu unsent at exit%s%s",
			(unsigned long long)ps.sent, (unsigned long long)ps.attempts_failed,
			(unsigned long long)ps.dropped_full,
			(unsigned long long)ps.dropped_rejected,
			(unsigned long long)ps.dropped_exit,
			ps.last_error[0] ? "; last error: " : "", ps.last_error);
	}
	if (dir)
		profdir_stats(dir, &ds);

	daemon_say(
		o,
		"profiles: %llu intervals, %llu profiles, %llu samples (%llu outside known JVMs)%s, "
		"%llu not written; directory %zu profiles, %.1f MiB (%llu removed by retention, "
		"%llu errors)",
		(unsigned long long)rs.intervals, (unsigned long long)rs.profiles,
		(unsigned long long)rs.samples, (unsigned long long)rs.other_samples, times,
		(unsigned long long)rs.write_errors, ds.sets, (double)ds.bytes / 1048576.0,
		(unsigned long long)ds.removed, (unsigned long long)ds.errors);
	profdir_close(dir);
}
