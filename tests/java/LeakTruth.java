// SPDX-License-Identifier: MIT
/*
 * LeakTruth - a leak that grows by a known number of bytes per second beside garbage, for live
 * (leak) profiles.
 *
 *   java LeakTruth SECONDS
 *
 * Threads (by name):
 *   fg-leaker  leak(): stores a byte[4096] in an array allocated at the start (so nothing else
 *              is allocated on the way) 1000 times a second, 4.1 MB/s, all kept, until the
 *              array is full (65536 of them, 65 s); allocates nothing else;
 *   fg-churn   churn(): byte[] of 16 B .. 16 KiB at 64 MB/s, kept in a ring of 64: garbage.
 * Every 100 ms the main thread prints one line: the JVM's own count
 * (com.sun.management.ThreadMXBean.getThreadAllocatedBytes) of each thread's bytes since it
 * started and the number of arrays kept, stamped with System.nanoTime (CLOCK_MONOTONIC on
 * Linux, the clock of the profiles' events):
 *   leak-truth NANOTIME fg-leaker B fg-churn B kept N end
 * ("end" closes a complete line). Prints "LeakTruth ready" once both threads ran 2 s (compiled).
 * Needs a heap of 300 MB or more (-Xmx).
 */
import java.lang.management.ManagementFactory;

public final class LeakTruth {
	static final int CHUNK = 4096, MAX_KEPT = 65536, RING = 64;
	static final Object[] kept = new Object[MAX_KEPT];
	static volatile int nKept;
	static final Object[] ring = new Object[RING];
	static volatile long sink;

	static void leak(int i)
	{
		kept[i] = new byte[CHUNK];
	}

	static void leaker()
	{
		long t0 = System.nanoTime();

		try {
			for (int i = 0; i < MAX_KEPT; i++) {
				long due = t0 + 1_000_000L * i; /* the i-th array at i ms */
				long wait = due - System.nanoTime();
				if (wait > 0)
					Thread.sleep(wait / 1_000_000, (int)(wait % 1_000_000));
				leak(i);
				nKept = i + 1;
			}
		} catch (InterruptedException e) {
		}
	}

	static long next(long x)
	{
		x ^= x << 13;
		x ^= x >>> 7;
		x ^= x << 17;
		return x;
	}

	static long churn(long seed, int n)
	{
		long bytes = 0;

		for (int i = 0; i < n; i++) {
			seed = next(seed);
			int len = 16 + (int)((seed >>> 1) % 16369);
			ring[i & (RING - 1)] = new byte[len];
			bytes += 16 + len;
		}
		sink = seed;
		return bytes;
	}

	static void churner()
	{
		long t0 = System.nanoTime(), done = 0, seed = 0x2545F4914F6CDD1DL;

		try {
			for (;;) {
				if (done >= 64e6 * (System.nanoTime() - t0) / 1e9) {
					Thread.sleep(1);
					continue;
				}
				done += churn(seed, 16);
				seed = next(seed);
			}
		} catch (InterruptedException e) {
		}
	}

	static Thread start(String name, Runnable r)
	{
		Thread t = new Thread(r, name);

		t.setDaemon(true);
		t.start();
		return t;
	}

	public static void main(String[] args) throws Exception
	{
		long seconds = Long.parseLong(args[0]);
		com.sun.management.ThreadMXBean mx =
			(com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
		mx.setThreadAllocatedMemoryEnabled(true);
		Thread l = start("fg-leaker", LeakTruth::leaker);
		Thread c = start("fg-churn", LeakTruth::churner);
		long[] ids = { l.getId(), c.getId() };
		Thread.sleep(2000);
		System.out.println("LeakTruth ready");
		long end = System.nanoTime() + seconds * 1_000_000_000L;
		while (System.nanoTime() < end) {
			Thread.sleep(100);
			long now = System.nanoTime();
			long[] b = mx.getThreadAllocatedBytes(ids);
			System.out.println("leak-truth " + now + " fg-leaker " + b[0] + " fg-churn " + b[1] +
					   " kept " + nKept + " end");
			System.out.flush();
		}
	}
}
