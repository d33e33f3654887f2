// SPDX-License-Identifier: MIT
/*
 * fgrecv.c - a minimal collector for the agent's tests: listens on SOCKET with the collector's
 * own listener (ingest/receive.c, watchdog included: an agent that refuses its dialer's redial
 * closes a connection during the SP handshake, which wedges a bare nng 1.5.2 listener), decodes
 * every message with the shared decoder and prints one line per record on stdout (flushed),
 * plus a "disconnect" line when a connection ends. Runs until SIGTERM/SIGINT.
 *
 *   fgrecv [--events WORDS] SOCKET
 *
 * --events plays a collector that reads interned names, tables on demand (never asked for) and
 * events (fgsocket.h), and asks every agent that says hello for the events WORDS name
 * ("alloc=524288 live lock=10 depth=64", the words of the want file's events line); stack events
 * then print with their frames' names.
 *
 * Invariant: it prints only what the decoder accepted; invalid records print "bad".
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <poll.h>

#include "fgproto.h"
#include "fgsocket.h"
#include "receive.h"

static volatile sig_atomic_t quit;

/* --events: the names of this connection's ids, and the want file's events words. */
static char **names;
static uint32_t n_names;
static const char *events_words;
static char want_path[4200];

static void name_define(uint32_t id, struct fgp_str s)
{
	if (id >= FGP_MAX_NAMES)
		return;
	if (id >= n_names) {
		uint32_t n = id + 1024;
		char **v = realloc(names, n * sizeof(*v));

		if (!v)
			return;
		memset(v + n_names, 0, (n - n_names) * sizeof(*v));
		names = v;
		n_names = n;
	}
	free(names[id]);
	names[id] = strndup(s.ptr, s.len);
}

static const char *name_of(uint32_t id)
{
	return id < n_names && names[id] ? names[id] : "?";
}

/* --events: ask the agent of this HELLO (by its token) for the events. */
static void ask_events(uint64_t token)
{
	FILE *f;

	if (!events_words || !token || !(f = fopen(want_path, "w")))
		return;
	fprintf(f, "%016llx %s %s\n", (unsigned long long)token, FG_WANT_EVENTS_WORD, events_words);
	fclose(f);
}

static void print_event(const struct fgp_record *r)
{
	const struct fgp_stack_event *e = &r->u.ev;

	printf("event kind=%s tid=%u value=%llu interval=%llu tag=%llu class=%.*s depth=%u%s\n",
	       e->kind == FGP_EV_ALLOC ? "alloc" : "lock", e->tid, (unsigned long long)e->value,
	       (unsigned long long)e->interval, (unsigned long long)e->tag, e->cls.len, e->cls.ptr,
	       e->depth, (r->flags & FGP_REC_STACK_TRUNCATED) ? " truncated" : "");
	for (uint16_t i = 0; i < e->depth; i++) {
		uint32_t id;
		int32_t line;

		fgp_event_frame(e, i, &id, &line);
		printf("  frame %s:%d\n", name_of(id), line);
	}
}

static void on_signal(int sig)
{
	(void)sig;
	quit = 1;
}

static void print_record(const struct fgp_record *r)
{
	const char *replay = (r->flags & FGP_REC_REPLAY) ? " replay" : "";

	switch (r->type) {
	case FGP_HELLO:
		printf("hello proto=%u pid=%u pfp=%u dns=%u sig=%u jvm=%.*s agent=%.*s service=%.*s\n",
		       r->u.hello.proto_version, r->u.hello.pid,
		       !!(r->u.hello.flags & FGP_HELLO_PRESERVE_FRAME_POINTER),
		       !!(r->u.hello.flags & FGP_HELLO_DEBUG_NON_SAFEPOINTS),
		       !!(r->u.hello.flags & FGP_HELLO_SIGNATURES), r->u.hello.jvm_version.len,
		       r->u.hello.jvm_version.ptr, r->u.hello.agent_version.len,
		       r->u.hello.agent_version.ptr, r->u.hello.service.len,
		       r->u.hello.service.ptr);
		if (r->u.hello.flags & FGP_HELLO_EVENTS)
			printf("hello-events token=%016llx\n",
			       (unsigned long long)r->u.hello.token);
		ask_events(r->u.hello.token);
		break;
	case FGP_NAME:
		name_define(r->u.name.id, r->u.name.name);
		break;
	case FGP_CODE_LOAD_IDS:
		printf("load-ids addr=%llx size=%u name=%s\n", (unsigned long long)r->u.load.addr,
		       r->u.load.size, name_of(r->u.load.name_id));
		break;
	case FGP_STACK_EVENT:
		print_event(r);
		break;
	case FGP_OBJECT_FREE:
		printf("object-free n=%u first=%llu\n", r->u.freed.n,
		       (unsigned long long)fgp_free_tag(&r->u.freed, 0));
		break;
	case FGP_EVENTS:
		printf("events on=%u alloc=%llu lock_ns=%llu dropped_queue=%llu dropped_other=%llu "
		       "lock_short=%llu lock_short_ns=%llu\n",
		       r->u.events.on, (unsigned long long)r->u.events.alloc_interval,
		       (unsigned long long)r->u.events.lock_threshold_ns,
		       (unsigned long long)r->u.events.dropped_queue,
		       (unsigned long long)r->u.events.dropped_other,
		       (unsigned long long)r->u.events.lock_short,
		       (unsigned long long)r->u.events.lock_short_ns);
		break;
	case FGP_CODE_LOAD: {
		struct fgp_inline_iter it;
		struct fgp_str m;
		struct fgp_pc pc;
		unsigned inl = 0;

		printf("load addr=%llx size=%u ts=%llu name=%.*s methods=%u pcs=%u%s%s\n",
		       (unsigned long long)r->u.load.addr, r->u.load.size,
		       (unsigned long long)r->u.load.ts, r->u.load.name.len, r->u.load.name.ptr,
		       r->u.load.n_methods, r->u.load.n_pcs, replay,
		       (r->flags & FGP_REC_INLINE_TRUNCATED) ? " truncated" : "");
		fgp_methods_begin(&r->u.load, &it);
		while (fgp_methods_next(&it, &m))
			printf("  method %.*s\n", m.len, m.ptr);
		fgp_pcs_begin(&r->u.load, &it);
		while (fgp_pcs_next(&it, &pc) && inl++ < 1000000)
			if (pc.depth > 1)
				printf("  inlined pc=%u depth=%u\n", pc.pc_off, pc.depth);
		break;
	}
	case FGP_CODE_UNLOAD:
		printf("unload addr=%llx ts=%llu\n", (unsigned long long)r->u.unload.addr,
		       (unsigned long long)r->u.unload.ts);
		break;
	case FGP_DYNAMIC_CODE:
		printf("dyn addr=%llx size=%u name=%.*s%s\n", (unsigned long long)r->u.dyn.addr,
		       r->u.dyn.size, r->u.dyn.name.len, r->u.dyn.name.ptr, replay);
		break;
	case FGP_SNAPSHOT_BEGIN:
	case FGP_SNAPSHOT_END:
		printf("%s count=%u\n",
		       r->type == FGP_SNAPSHOT_BEGIN ? "snapshot-begin" : "snapshot-end",
		       r->u.snap.count);
		break;
	case FGP_DROPPED:
		printf("dropped queue=%llu table=%llu\n",
		       (unsigned long long)r->u.dropped.queue_full,
		       (unsigned long long)r->u.dropped.table_full);
		break;
	case FGP_CODE_FRAME: {
		const struct fgp_code_frame *f = &r->u.frame;

		printf("frame addr=%llx kind=%u frame=%u code=%llx+%u complete=%d deopt=%llx "
		       "deopt_mh=%llx orig_pc=%d\n",
		       (unsigned long long)f->addr, f->kind, f->frame_size,
		       (unsigned long long)f->code_begin, f->code_size, f->frame_complete,
		       (unsigned long long)f->deopt, (unsigned long long)f->deopt_mh,
		       f->orig_pc_offset);
		break;
	}
	case FGP_VM_LAYOUT: {
		unsigned n = 0;

		for (unsigned k = 1; k < FGP_VML_NKEYS; k++)
			n += fgp_vml_has(&r->u.layout, (enum fgp_vml_key)k);
		printf("layout caps=%#x keys=%u\n", r->u.layout.caps, n);
		break;
	}
	case FGP_CODE_LINES: {
		struct fgp_inline_iter it;
		struct fgp_pc pc;

		printf("lines addr=%llx size=%u pcs=%u\n", (unsigned long long)r->u.lines.addr,
		       r->u.lines.size, r->u.lines.n_pcs);
		fgp_lines_begin(&r->u.lines, &it);
		while (fgp_pcs_next(&it, &pc) == 1) {
			printf("  +%x:", pc.pc_off);
			for (unsigned d = 0; d < pc.depth; d++)
				printf("%s%u", d ? "," : "", fgp_pc_line(&pc, d));
			printf("\n");
		}
		break;
	}
	default:
		printf("unknown type=%u\n", r->type);
	}
}

int main(int argc, char **argv)
{
	struct receive_opts o = { .watchdog_ms = 1000, .in_process = 1 };
	struct receive_stats st;
	struct receive *rx;
	char features[4096];
	struct sigaction sa;
	int rv;

	if (argc == 4 && strcmp(argv[1], "--events") == 0) {
		events_words = argv[2];
		argv += 2;
		argc -= 2;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: fgrecv [--events WORDS] SOCKET\n");
		return 64;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	o.path = argv[1];
	if ((rv = receive_open(&o, &rx)) != 0) {
		fprintf(stderr, "fgrecv: %s: %s\n", argv[1], strerror(-rv));
		return 1;
	}
	/*
	 * Play a collector that reads every table (one without the features file): agents then
	 * send CODE_LOAD records with names and tables, which this tool prints as they come.
	 */
	snprintf(features, sizeof(features), "%s%s", argv[1], FG_FEATURES_SUFFIX);
	snprintf(want_path, sizeof(want_path), "%s%s", argv[1], FG_WANT_SUFFIX);
	if (unlink(features) != 0 && errno != ENOENT) {
		fprintf(stderr, "fgrecv: %s: %s\n", features, strerror(errno));
		receive_close(rx);
		return 1;
	}
	if (events_words) {
		/* A collector that reads interned names, tables on demand (it never asks for them)
		 * and events. */
		FILE *f = fopen(features, "w");

		if (!f ||
		    fprintf(f, "%s\n%s\n%s\n", FG_FEATURE_INTERN, FG_FEATURE_TABLES,
			    FG_FEATURE_EVENTS) < 0 ||
		    fclose(f) != 0) {
			fprintf(stderr, "fgrecv: %s: cannot write\n", features);
			receive_close(rx);
			return 1;
		}
	}
	printf("listening\n");
	fflush(stdout);
	while (!quit) {
		struct pollfd fds[2];
		struct receive_ev ev;
		struct fgp_reader rd;
		struct fgp_record rec;

		if (receive_next(rx, &ev) == 0) {
			int n = receive_pollfds(rx, fds);

			poll(fds, (nfds_t)n, 100);
			continue;
		}
		if (ev.type == RECEIVE_GONE) {
			printf("disconnect\n");
			for (uint32_t i = 0; i < n_names; i++) {
				free(names[i]);
				names[i] = NULL; /* ids are per connection */
			}
		} else if (fgp_reader_init(&rd, ev.data, ev.len) != 0) {
			printf("bad message\n");
		} else {
			while ((rv = fgp_next(&rd, &rec)) != 0) {
				if (rv < 0)
					printf("bad\n");
				else
					print_record(&rec);
			}
		}
		fflush(stdout);
	}
	receive_stats(rx, &st);
	fprintf(stderr,
		"fgrecv: %llu accepted, %llu gone, watchdog %llu probes / %llu failed / %llu relistens\n",
		(unsigned long long)st.accepted, (unsigned long long)st.gone,
		(unsigned long long)st.probes, (unsigned long long)st.probe_fail,
		(unsigned long long)st.relistens);
	receive_close(rx);
	return 0;
}
