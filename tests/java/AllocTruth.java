// SPDX-License-Identifier: MIT
/*
 * AllocTruth - threads that allocate known volumes of known classes in named methods, and the
 * JVM's own count of every thread's bytes, for allocation profiles.
 *
 *   java AllocTruth SECONDS DIR [SCALE=1]
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
 * They allocate only during bursts (Burst: a test writes "N MS" to DIR/burst), after a 2 s
 * warm-up burst of their own; for each the main thread prints the JVM's own count
 * (com.sun.management.ThreadMXBean.getThreadAllocatedBytes) of each thread's bytes in it:
 *   alloc-burst N start
 *   alloc-burst N fg-bytes B fg-longs B fg-particles B fg-strings B end
 * Between bursts, every 100 ms, the same counts since the start, stamped with System.nanoTime:
 *   alloc-truth NANOTIME fg-bytes B fg-longs B fg-particles B fg-strings B end
 * Prints "AllocTruth ready" after the warm-up.
 */
import java.lang.management.ManagementFactory;
import java.util.concurrent.locks.LockSupport;

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

	/* Allocates rate bytes/s in batches of n during each burst, parking 1 ms whenever ahead;
	 * never catches up more than 50 ms (a steady rate once compiled). */
	static void pace(Burst b, Maker m, int ringNo, double rate, int n)
	{
		Object[] ring = rings[ringNo];
		long seed = 0x9E3779B97F4A7C15L + ringNo;

		try {
			for (int g = 0;;) {
				g = b.awaitStart(g);
				long t0 = System.nanoTime(), done = 0;
				while (b.active()) {
					double due = rate * (System.nanoTime() - t0) / 1e9;
					if (done < due - rate / 20) /* more than 50 ms behind: start afresh */
						done = (long)(due - rate / 20);
					if (done >= due) { /* parks: Thread.sleep allocates a little on some JDKs */
						LockSupport.parkNanos(1_000_000L);
						continue;
					}
					done += m.make(ring, seed, n);
					seed = next(seed);
				}
				b.done();
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

	static String counts(String[] names, long[] b)
	{
		StringBuilder sb = new StringBuilder(256);

		for (int i = 0; i < names.length; i++)
			sb.append(' ').append(names[i]).append(' ').append(b[i]);
		return sb.append(" end").toString();
	}

	public static void main(String[] args) throws Exception
	{
		long seconds = Long.parseLong(args[0]);
		Burst b = new Burst(args[1], 4);
		double scale = args.length > 2 ? Double.parseDouble(args[2]) : 1.0, mb = 1e6 * scale;
		com.sun.management.ThreadMXBean mx =
			(com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
		mx.setThreadAllocatedMemoryEnabled(true);
		String[] names = { "fg-bytes", "fg-longs", "fg-particles", "fg-strings" };
		Thread[] t = new Thread[4];
		t[0] = start(names[0], () -> pace(b, AllocTruth::makeBytes, 0, 96 * mb, 16));
		t[1] = start(names[1], () -> pace(b, AllocTruth::makeLongs, 1, 48 * mb, 1));
		t[2] = start(names[2], () -> pace(b, AllocTruth::makeParticles, 2, 24 * mb, 256));
		t[3] = start(names[3], () -> pace(b, AllocTruth::makeStrings, 3, 12 * mb, 256));
		long[] ids = new long[4];
		for (int i = 0; i < 4; i++)
			ids[i] = t[i].getId();
		b.run(2000); /* compiled by now */
		System.out.println("AllocTruth ready");
		System.out.flush();
		long end = System.nanoTime() + seconds * 1_000_000_000L, next = 0;
		while (System.nanoTime() < end) {
			Thread.sleep(10);
			long ms = b.poll();
			if (ms > 0) {
				System.out.println("alloc-burst " + b.asked() + " start");
				System.out.flush();
				long[] b0 = mx.getThreadAllocatedBytes(ids);
				b.run(ms);
				long[] b1 = mx.getThreadAllocatedBytes(ids);
				for (int i = 0; i < 4; i++)
					b1[i] -= b0[i];
				System.out.println("alloc-burst " + b.asked() + counts(names, b1));
				System.out.flush();
			}
			long now = System.nanoTime();
			if (now >= next) {
				next = now + 100_000_000L;
				System.out.println("alloc-truth " + now + counts(names, mx.getThreadAllocatedBytes(ids)));
				System.out.flush();
			}
		}
	}
}
