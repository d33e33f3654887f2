// SPDX-License-Identifier: MIT
/*
 * hostile_fp_peer.c - a hostile "agent" for record_interp_hostile.sh whose own code keeps a
 * frame-pointer chain, so a collector that believes its claims walks real frames and reads its
 * memory with the offsets it is told.
 *
 *   hostile_fp_peer SOCKET MSGFILE SECONDS
 *
 * MSGFILE holds nng-framed messages (u32 little-endian length, then the bytes: 0x01, u64
 * big-endian payload length, payload) written by hostile_client.py's `layoutfile` mode. The
 * first is a HELLO whose pid this program patches with its own; the second a DYNAMIC_CODE whose
 * address and size it patches with its own text, named "Interpreter"; the rest VM_LAYOUT
 * records. A sender thread connects (push0 over ipc), sends the first two at once and one more
 * every 100 ms; the main thread spins in a 24-deep recursion for SECONDS. Exit 0 when it ran.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

extern char __executable_start[], etext[];

static uint8_t *msgs;
static size_t msgs_len;
static const char *sock_path;
static volatile int stop;
static volatile uint64_t sink;

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static int dial(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	static const uint8_t sp[8] = { 0, 'S', 'P', 0, 0x00, 0x50, 0, 0 };
	uint8_t peer[8];

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", sock_path);
	for (int i = 0; i < 200 && !stop; i++) {
		int fd = socket(AF_UNIX, SOCK_STREAM, 0);

		if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
		    send(fd, sp, 8, MSG_NOSIGNAL) == 8 && recv(fd, peer, 8, MSG_WAITALL) == 8)
			return fd;
		if (fd >= 0)
			close(fd);
		usleep(50000);
	}
	return -1;
}

static void *sender(void *arg)
{
	size_t off = 0;
	int fd = dial(), n = 0;

	(void)arg;
	while (fd >= 0 && !stop && off + 4 <= msgs_len) {
		uint32_t len = msgs[off] | msgs[off + 1] << 8 | msgs[off + 2] << 16 |
			       (uint32_t)msgs[off + 3] << 24;
		uint8_t *m = msgs + off + 4;

		if (off + 4 + len > msgs_len)
			break;
		if (n == 0 && len >= 33)
			put32(m + 29, (uint32_t)getpid());
		if (n == 1 && len >= 37) {
			put64(m + 25, (uint64_t)(uintptr_t)__executable_start);
			put32(m + 33, (uint32_t)((uintptr_t)etext - (uintptr_t)__executable_start));
		}
		if (send(fd, m, len, MSG_NOSIGNAL) != (ssize_t)len)
			break; /* the collector is gone: its recording ended */
		off += 4 + len;
		if (++n >= 2)
			usleep(100000);
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

static uint64_t spin(int depth, uint64_t x);
/* Called through a volatile pointer: the compiler cannot turn the recursion into a loop. */
static uint64_t (*volatile spin_p)(int, uint64_t) = spin;

__attribute__((noinline)) static uint64_t spin(int depth, uint64_t x)
{
	if (depth > 0)
		return spin_p(depth - 1, x * 31 + (uint64_t)depth) + 1;
	for (int i = 0; i < 100000; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

int main(int argc, char **argv)
{
	struct timespec t0, t;
	pthread_t th;
	FILE *f;
	long n;

	if (argc != 4) {
		fprintf(stderr, "usage: hostile_fp_peer SOCKET MSGFILE SECONDS\n");
		return 64;
	}
	sock_path = argv[1];
	f = fopen(argv[2], "rb");
	if (!f || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) <= 0 ||
	    !(msgs = malloc((size_t)n)) || fseek(f, 0, SEEK_SET) != 0 ||
	    fread(msgs, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "hostile_fp_peer: cannot read %s\n", argv[2]);
		return 1;
	}
	fclose(f);
	msgs_len = (size_t)n;
	if (pthread_create(&th, NULL, sender, NULL) != 0)
		return 1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		sink += spin(24, sink);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < atol(argv[3]));
	stop = 1;
	pthread_join(th, NULL);
	printf("hostile_fp_peer: pid %d ran %s s\n", (int)getpid(), argv[3]);
	return 0;
}
