// SPDX-License-Identifier: MIT
import java.lang.reflect.Method;

/**
 * VThreadDeep [THREADS [DEPTH]]: THREADS virtual threads (default 4; JDK 21+) named
 * "vdeep-0".., each recursing DEPTH deep (default 120) through VThreadDeep::descend, and at the
 * bottom looping forever: about 200 us of computation in VThreadDeep::spin, then
 * Thread.yield(). Every yield freezes the stack into its heap stack chunk and the next mount
 * thaws only its top frames back (lazy thaw): the frames above the bottom of the recursion stay
 * frozen while spin runs. A CPU sample in spin is whole when it holds all DEPTH descend frames
 * and VThreadDeep::body below them. Prints "VThreadDeep ready" once every thread is at the
 * bottom, then every 100 ms "vtd NANOTIME LOOPS".
 * Compiled against JDK 17: the virtual-thread builder is used by reflection.
 */
public class VThreadDeep {
	static volatile long sink;
	static final java.util.concurrent.atomic.AtomicLong loops =
			new java.util.concurrent.atomic.AtomicLong();
	static int depth;

	static long spin(long x) {
		long end = System.nanoTime() + 200_000;
		while (System.nanoTime() < end)
			for (int i = 0; i < 64; i++)
				x = x * 6364136223846793005L + 1442695040888963407L;
		return x;
	}

	static void bottom() {
		long x = sink;
		for (;;) {
			x = spin(x);
			sink = x;
			loops.incrementAndGet();
			Thread.yield();
		}
	}

	static void descend(int n) {
		if (n > 1)
			descend(n - 1);
		else if (n == 1)
			bottom();
		sink++;
	}

	static void body() {
		descend(depth);
	}

	public static void main(String[] args) throws Exception {
		int threads = args.length > 0 ? Integer.parseInt(args[0]) : 4;
		depth = args.length > 1 ? Integer.parseInt(args[1]) : 120;
		/* descend compiled before the threads' stacks are built (n = 0: no bottom) */
		for (int i = 0; i < 20000; i++)
			descend(0);
		Thread.sleep(500);
		Method ofVirtual = Thread.class.getMethod("ofVirtual");
		Class<?> builder = Class.forName("java.lang.Thread$Builder");
		Method name = builder.getMethod("name", String.class, long.class);
		Method start = builder.getMethod("start", Runnable.class);
		Object b = name.invoke(ofVirtual.invoke(null), "vdeep-", 0L);
		Thread[] ts = new Thread[threads];
		for (int t = 0; t < threads; t++)
			ts[t] = (Thread) start.invoke(b, (Runnable) VThreadDeep::body);
		while (loops.get() < 100L * threads)
			Thread.sleep(10);
		System.out.println("VThreadDeep ready");
		System.out.flush();
		for (;;) {
			Thread.sleep(100);
			System.out.println("vtd " + System.nanoTime() + " " + loops.get());
			System.out.flush();
		}
	}
}
