// SPDX-License-Identifier: MIT
/*
 * test_rxchan.c - the sandboxed receiver's channel: frames of every type round trip, every
 * truncation, extension and field out of range is refused, a message forwards only when every
 * record decodes; the sandbox's seccomp filter and the confinement of a forked process
 * (/proc/self/status after sandbox_enter, and death by SIGSYS at a forbidden call).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "fgproto.h"
#include "rxchan.h"
#include "sandbox.h"

static size_t frame(uint8_t *b, enum rxchan_type t, uint32_t pipe, uint32_t arg, const void *data,
		    size_t len)
{
	rxchan_header(b, t, pipe, arg, (uint32_t)len);
	if (len)
		memcpy(b + RXCHAN_HDR, data, len);
	return RXCHAN_HDR + len;
}

static void test_frames_round_trip(void **state)
{
	uint8_t b[256], p[RXCHAN_BEAT_SIZE];
	struct rxchan_beat bt = { .accepted = 7,
				  .gone = 3,
				  .connected = 4,
				  .refused_msgs = 9,
				  .probe_denied = 3,
				  .last_err = -EMFILE };
	struct rxchan_frame f;
	size_t n;

	(void)state;
	n = frame(b, RXC_MSG, 12, 4321, "hello", 5);
	assert_int_equal(rxchan_decode(b, n, true, 64, &f), 0);
	assert_int_equal(f.type, RXC_MSG);
	assert_int_equal(f.pipe, 12);
	assert_int_equal(f.arg, 4321);
	assert_int_equal(f.len, 5);
	assert_memory_equal(f.data, "hello", 5);
	rxchan_beat_encode(p, &bt);
	n = frame(b, RXC_BEAT, 0, 0, p, sizeof(p));
	assert_int_equal(rxchan_decode(b, n, true, 64, &f), 0);
	assert_int_equal(f.beat.accepted, 7);
	assert_int_equal(f.beat.connected, 4);
	assert_int_equal(f.beat.refused_msgs, 9);
	assert_int_equal(f.beat.probe_denied, 3);
	assert_int_equal(f.beat.last_err, -EMFILE);
	n = frame(b, RXC_READY, 0, (uint32_t)-EADDRINUSE, NULL, 0);
	assert_int_equal(rxchan_decode(b, n, true, 64, &f), 0);
	assert_int_equal((int32_t)f.arg, -EADDRINUSE);
	n = frame(b, RXC_GONE, 9, 0, NULL, 0);
	assert_int_equal(rxchan_decode(b, n, true, 64, &f), 0);
	n = frame(b, RXC_DROP, 9, 0, NULL, 0);
	assert_int_equal(rxchan_decode(b, n, false, 0, &f), 0);
	n = frame(b, RXC_PAUSE, 0, 1, NULL, 0);
	assert_int_equal(rxchan_decode(b, n, false, 0, &f), 0);
	n = frame(b, RXC_EXIT, 0, 0, NULL, 0);
	assert_int_equal(rxchan_decode(b, n, false, 0, &f), 0);
	n = frame(b, RXC_PING, 0, 0, NULL, 0);
	assert_int_equal(rxchan_decode(b, n, false, 0, &f), 0);
	assert_int_equal(f.type, RXC_PING);
}

static void test_bad_frames_refused(void **state)
{
	uint8_t b[256], p[RXCHAN_BEAT_SIZE] = { 0 };
	struct rxchan_frame f;
	size_t n;

	(void)state;
	n = frame(b, RXC_MSG, 1, 100, "abcd", 4);
	for (size_t k = 0; k < n; k++) /* every truncation */
		assert_int_equal(rxchan_decode(b, k, true, 64, &f), -EBADMSG);
	assert_int_equal(rxchan_decode(b, n + 1, true, 64, &f), -EBADMSG); /* longer than said */
	assert_int_equal(rxchan_decode(b, n, false, 64, &f), -EBADMSG);	   /* wrong direction */
	assert_int_equal(rxchan_decode(b, n, true, 3, &f), -EBADMSG);	   /* above the cap */
	b[0] ^= 1;
	assert_int_equal(rxchan_decode(b, n, true, 64, &f), -EBADMSG); /* magic */
	n = frame(b, RXC_MSG, 0, 100, "a", 1);			       /* no pipe */
	assert_int_equal(rxchan_decode(b, n, true, 64, &f), -EBADMSG);
	n = frame(b, RXC_MSG, 1, 0, "a", 1); /* no PID */
	assert_int_equal(rxchan_decode(b, n, true, 64, &f), -EBADMSG);
	n = frame(b, RXC_MSG, 1, RXCHAN_MAX_PID + 1, "a", 1);
	assert_int_equal(rxchan_decode(b, n, true, 64, &f), -EBADMSG);
	n = frame(b, RXC_MSG, 1, 5, NULL, 0); /* empty */
	assert_int_equal(rxchan_decode(b, n, true, 64, &f), -EBADMSG);
	n = frame(b, RXC_GONE, 0, 0, NULL, 0);
	assert_int_equal(rxchan_decode(b, n, true, 64, &f), -EBADMSG);
	n = frame(b, RXC_GONE, 3, 0, "x", 1);
	assert_int_equal(rxchan_decode(b, n, true, 64, &f), -EBADMSG);
	n = frame(b, RXC_READY, 0, RXCHAN_READY_PARTIAL + 1, NULL, 0); /* an unknown partial bit */
	assert_int_equal(rxchan_decode(b, n, true, 64, &f), -EBADMSG);
	n = frame(b, RXC_READY, 0, RECEIVE_SANDBOX_NO_IDS, NULL, 0); /* confined but for the uid */
	assert_int_equal(rxchan_decode(b, n, true, 64, &f), 0);
	assert_int_equal(f.arg, RECEIVE_SANDBOX_NO_IDS);
	n = frame(b, RXC_BEAT, 0, 0, p, sizeof(p) - 1);
	assert_int_equal(rxchan_decode(b, n, true, 64, &f), -EBADMSG);
	p[72] = 1; /* last_err > 0: the u64 after the nine counters */
	n = frame(b, RXC_BEAT, 0, 0, p, sizeof(p));
	assert_int_equal(rxchan_decode(b, n, true, 64, &f), -EBADMSG);
	n = frame(b, RXC_PAUSE, 0, 2, NULL, 0);
	assert_int_equal(rxchan_decode(b, n, false, 0, &f), -EBADMSG);
	n = frame(b, (enum rxchan_type)5, 0, 0, NULL, 0);
	assert_int_equal(rxchan_decode(b, n, true, 64, &f), -EBADMSG);
	n = frame(b, RXC_PING, 0, 0, NULL, 0);
	assert_int_equal(rxchan_decode(b, n, true, 64, &f), -EBADMSG); /* wrong direction */
	n = frame(b, RXC_PING, 0, 1, NULL, 0);
	assert_int_equal(rxchan_decode(b, n, false, 0, &f), -EBADMSG);
	n = frame(b, RXC_PING, 0, 0, "x", 1);
	assert_int_equal(rxchan_decode(b, n, false, 0, &f), -EBADMSG);
	n = frame(b, (enum rxchan_type)(RXC_PING + 1), 0, 0, NULL, 0);
	assert_int_equal(rxchan_decode(b, n, false, 0, &f), -EBADMSG);
}

static void test_msg_ok_needs_every_record(void **state)
{
	uint8_t m[256];
	struct fgp_code_unload u = { .addr = 0x1000, .ts = 5 };
	size_t n;

	(void)state;
	n = (size_t)fgp_encode_msg_header(m, sizeof(m));
	assert_true(rxchan_msg_ok(m, n)); /* no record: whole */
	n += (size_t)fgp_encode_code_unload(m + n, sizeof(m) - n, &u);
	assert_true(rxchan_msg_ok(m, n));
	for (size_t k = 0; k < n; k++)
		if (k != FGP_MSG_HEADER_SIZE)
			assert_false(rxchan_msg_ok(m, k));
	m[FGP_MSG_HEADER_SIZE] = 0xff; /* unknown type: skipped by size, forwarded */
	m[FGP_MSG_HEADER_SIZE + 1] = 0x7f;
	assert_true(rxchan_msg_ok(m, n));
	m[FGP_MSG_HEADER_SIZE + 4] = 4; /* a record shorter than its header */
	assert_false(rxchan_msg_ok(m, n));
	m[0] = 'X';
	assert_false(rxchan_msg_ok(m, n));
}

static void test_filter_fits(void **state)
{
	struct sock_filter f[160];
	size_t n = sandbox_filter(f, 160, getpid());

	(void)state;
	assert_true(n > 10);
	assert_int_equal(sandbox_filter(f, n - 1, getpid()), 0); /* too small: refused */
	assert_int_equal(f[n - 1].k, SECCOMP_RET_KILL_PROCESS);	 /* the default */
}

/* The value of key in /proc/PID/status ("" when absent). */
static void status_field(pid_t pid, const char *key, char *out, size_t cap)
{
	char line[256], path[64];
	FILE *f;
	size_t kl = strlen(key);

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	out[0] = '\0';
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, kl) && line[kl] == ':') {
			snprintf(out, cap, "%s", line + kl + 1 + strspn(line + kl + 1, " \t"));
			out[strcspn(out, "\n")] = '\0';
		}
	if (f)
		fclose(f);
}

/*
 * A forked child confines itself and waits; its /proc status is read from here; told to go on,
 * its open of a file must fail with EACCES and its AF_INET socket kill it with SIGSYS.
 */
static void test_sandbox_confines_and_kills(void **state)
{
	struct sandbox_opts so = { .nofile = 64, .data_bytes = 256u << 20 };
	char v[64];
	int up[2], down[2], status, rv = 1;
	pid_t pid;

	(void)state;
	assert_int_equal(pipe(up), 0);
	assert_int_equal(pipe(down), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char go;

		close(up[0]);
		close(down[1]); /* a failing parent's end closing ends us */
		rv = sandbox_bound();
		if (rv == 0)
			rv = sandbox_enter(&so);
		if (write(up[1], &rv, sizeof(rv)) != sizeof(rv) || read(down[0], &go, 1) != 1)
			_exit(2);
		if (syscall(SYS_openat, AT_FDCWD, "/", O_RDONLY) >= 0 || errno != EACCES)
			_exit(3); /* opening is refused, not killed */
		(void)syscall(SYS_socket, AF_INET, SOCK_STREAM, 0);
		_exit(0); /* not reached: killed */
	}
	close(up[1]);
	close(down[0]);
	assert_int_equal(read(up[0], &rv, sizeof(rv)), sizeof(rv));
	assert_int_equal(rv, 0);
	status_field(pid, "Seccomp", v, sizeof(v));
	assert_string_equal(v, "2");
	status_field(pid, "NoNewPrivs", v, sizeof(v));
	assert_string_equal(v, "1");
	status_field(pid, "CapEff", v, sizeof(v));
	assert_string_equal(v, "0000000000000000");
	status_field(pid, "CapPrm", v, sizeof(v));
	assert_string_equal(v, "0000000000000000");
	if (geteuid() == 0) {
		status_field(pid, "CapBnd", v, sizeof(v));
		assert_string_equal(v, "0000000000000000");
		status_field(pid, "Uid", v, sizeof(v));
		assert_string_equal(v, "65534\t65534\t65534\t65534");
		status_field(pid, "Gid", v, sizeof(v));
		assert_string_equal(v, "65534\t65534\t65534\t65534");
	}
	assert_int_equal(write(down[1], "g", 1), 1);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGSYS);
	close(up[0]);
	close(down[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_frames_round_trip),
		cmocka_unit_test(test_bad_frames_refused),
		cmocka_unit_test(test_msg_ok_needs_every_record),
		cmocka_unit_test(test_filter_fits),
		cmocka_unit_test(test_sandbox_confines_and_kills),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
