// SPDX-License-Identifier: MIT
/*
 * AllocTruth - threads that allocate known volumes of known classes in named methods, and the
 * JVM's own count of every thread's bytes, for allocation profiles.
 *
 *   java AllocTruth SECONDS [SCALE=1]
 *
 * Threads (by name), each allocating one class in one method at a paced rate (bytes/s, times
 * SCALE), keeping nothing (every object is overwritten in a small ring soon after):
 *   fg-bytes      makeBytes():     byte[] of 16 B .. 16 KiB               96 MB/s
 *   fg-longs      makeLongs():     long[] of 8 KiB .. 1 MiB (past the     48 MB/s
 *                                  sampling interval: weighing matters)
 *   fg-particles  makeParticles(): AllocTruth$Particle (three doubles)    24 MB/s
 *   fg-strings    makeStrings():   java.lang.String (the copy constructor 12 MB/s
 *                                  shares the original's bytes: a String
 *                                  object alone)
 * Every 100 ms the main thread prints one line, the JVM's own count
 * (com.sun.management.ThreadMXBean.getThreadAllocatedBytes) of each thread's bytes since it
 * started, stamped with System.nanoTime (CLOCK_MONOTONIC on Linux, the clock of the profiles'
 * events), so that a test takes the truth of any window by interpolation:
 *   alloc-truth NANOTIME fg-bytes B fg-longs B fg-particles B fg-strings B end
 * ("end" closes a complete line). Prints "AllocTruth ready" once every thread ran 2 s (compiled).
 */
import java.lang.management.ManagementFactory;

public final class AllocTruth {
	static final class Particle {
		final double x, y, z;

		Particle(double x, double y, double z)
		{
			this.x = x;
			this.y = y;
			this.z = z;
		}
	}

	static final int RING = 64;
	static final Object[][] rings = new Object[4][RING];
	static final String BASE = "an allocation profile's known answer";
	static volatile long sink;

	/* xorshift: a fixed sequence of sizes, no allocation. */
	static long next(long x)
	{
		x ^= x << 13;
		x ^= x >>> 7;
		x ^= x << 17;
		return x;
	}

	/* Each make* allocates n objects of its class and returns an estimate of their bytes. */
	static long makeBytes(Object[] ring, long seed, int n)
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

	static long makeLongs(Object[] ring, long seed, int n)
	{
		long bytes = 0;

		for (int i = 0; i < n; i++) {
			seed = next(seed);
			int len = 1024 + (int)((seed >>> 1) % (131072 - 1024));
			ring[i & (RING - 1)] = new long[len];
			bytes += 16 + 8L * len;
		}
		sink = seed;
		return bytes;
	}

	static long makeParticles(Object[] ring, long seed, int n)
	{
		for (int i = 0; i < n; i++)
			ring[i & (RING - 1)] = new Particle(i, seed, -i);
		return 40L * n;
	}

	static long makeStrings(Object[] ring, long seed, int n)
	{
		for (int i = 0; i < n; i++)
			ring[i & (RING - 1)] = new String(BASE);
		return 24L * n;
	}

	interface Maker {
		long make(Object[] ring, long seed, int n);
	}

	/* Allocates rate bytes/s in batches of n, sleeping 1 ms whenever ahead; never catches up
 * more than 50 ms (a steady rate once compiled). */
	static void pace(Maker m, int ringNo, double rate, int n)
	{
		Object[] ring = rings[ringNo];
		long t0 = System.nanoTime(), done = 0, seed = 0x9E3779B97F4A7C15L + ringNo;

		try {
			for (;;) {
				double due = rate * (System.nanoTime() - t0) / 1e9;
				if (done < due - rate / 20) /* more than 50 ms behind: start afresh */
					done = (long)(due - rate / 20);
				if (done >= due) {
					Thread.sleep(1);
					continue;
				}
				done += m.make(ring, seed, n);
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
		double scale = args.length > 1 ? Double.parseDouble(args[1]) : 1.0, mb = 1e6 * scale;
		com.sun.management.ThreadMXBean mx =
			(com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
		mx.setThreadAllocatedMemoryEnabled(true);
		String[] names = { "fg-bytes", "fg-longs", "fg-particles", "fg-strings" };
		Thread[] t = new Thread[4];
		t[0] = start(names[0], () -> pace(AllocTruth::makeBytes, 0, 96 * mb, 16));
		t[1] = start(names[1], () -> pace(AllocTruth::makeLongs, 1, 48 * mb, 1));
		t[2] = start(names[2], () -> pace(AllocTruth::makeParticles, 2, 24 * mb, 256));
		t[3] = start(names[3], () -> pace(AllocTruth::makeStrings, 3, 12 * mb, 256));
		long[] ids = new long[4];
		for (int i = 0; i < 4; i++)
			ids[i] = t[i].getId();
		Thread.sleep(2000);
		System.out.println("AllocTruth ready");
		long end = System.nanoTime() + seconds * 1_000_000_000L;
		StringBuilder sb = new StringBuilder(256);
		while (System.nanoTime() < end) {
			Thread.sleep(100);
			long now = System.nanoTime();
			long[] b = mx.getThreadAllocatedBytes(ids);
			sb.setLength(0);
			sb.append("alloc-truth ").append(now);
			for (int i = 0; i < 4; i++)
				sb.append(' ').append(names[i]).append(' ').append(b[i]);
			sb.append(" end");
			System.out.println(sb);
			System.out.flush();
		}
	}
}
