// SPDX-License-Identifier: MIT
/*
 * LeakTruth - a leak that grows by a known number of bytes per second beside garbage, for live
 * (leak) profiles.
 *
 *   java LeakTruth SECONDS DIR
 *
 * Threads (by name):
 *   fg-leaker  leak(): during bursts only (Burst: a test writes "N MS" to DIR/burst), stores a
 *              byte[4096] in an array allocated at the start (so nothing else is allocated on
 *              the way) 1000 times a second, 4.1 MB/s, all kept, until the array is full
 *              (65536 of them, 65 s of bursts); allocates nothing else;
 *   fg-churn   churn(): all the time, byte[] of 16 B .. 16 KiB at 64 MB/s, kept in a ring of
 *              64: garbage (and young collections all along).
 * For each burst the main thread prints the JVM's own count
 * (com.sun.management.ThreadMXBean.getThreadAllocatedBytes) of each thread's bytes in it and
 * the number of arrays the leaker kept:
 *   leak-burst N start
 *   leak-burst N fg-leaker B fg-churn B kept K end
 * Between bursts, every 100 ms, the same since the start, stamped with System.nanoTime:
 *   leak-truth NANOTIME fg-leaker B fg-churn B kept K end
 * Prints "LeakTruth ready" after a 2 s warm-up burst (its leak is kept too). Needs a heap of
 * 300 MB or more (-Xmx).
 */
import java.lang.management.ManagementFactory;
import java.util.concurrent.locks.LockSupport;

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

	static void leaker(Burst b)
	{
		try {
			for (int g = 0, i = 0;;) {
				g = b.awaitStart(g);
				long t0 = System.nanoTime();
				for (long k = 0; b.active() && i < MAX_KEPT; k++, i++) {
					long wait = t0 + 1_000_000L * k - System.nanoTime(); /* one a ms */
					if (wait > 0) /* parks: Thread.sleep allocates a little on some JDKs */
						LockSupport.parkNanos(wait);
					if (!b.active())
						break;
					leak(i);
					nKept = i + 1;
				}
				b.done();
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

	static String line(long[] b, long kept)
	{
		return " fg-leaker " + b[0] + " fg-churn " + b[1] + " kept " + kept + " end";
	}

	public static void main(String[] args) throws Exception
	{
		long seconds = Long.parseLong(args[0]);
		Burst b = new Burst(args[1], 1);
		com.sun.management.ThreadMXBean mx =
			(com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
		mx.setThreadAllocatedMemoryEnabled(true);
		Thread l = start("fg-leaker", () -> leaker(b));
		Thread c = start("fg-churn", LeakTruth::churner);
		long[] ids = { l.getId(), c.getId() };
		b.run(2000); /* compiled by now */
		System.out.println("LeakTruth ready");
		System.out.flush();
		long end = System.nanoTime() + seconds * 1_000_000_000L, next = 0;
		while (System.nanoTime() < end) {
			Thread.sleep(10);
			long ms = b.poll();
			if (ms > 0) {
				System.out.println("leak-burst " + b.asked() + " start");
				System.out.flush();
				long[] b0 = mx.getThreadAllocatedBytes(ids);
				int k0 = nKept;
				b.run(ms);
				long[] b1 = mx.getThreadAllocatedBytes(ids);
				for (int i = 0; i < 2; i++)
					b1[i] -= b0[i];
				System.out.println("leak-burst " + b.asked() + line(b1, nKept - k0));
				System.out.flush();
			}
			long now = System.nanoTime();
			if (now >= next) {
				next = now + 100_000_000L;
				System.out.println("leak-truth " + now + line(mx.getThreadAllocatedBytes(ids), nKept));
				System.out.flush();
			}
		}
	}
}
