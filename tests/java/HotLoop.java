// SPDX-License-Identifier: MIT
/*
 * HotLoop - one hot method chain for profiling tests: main -> run -> step -> mix, for N seconds.
 *
 *   java HotLoop [SECONDS=30]
 *
 * Prints "HotLoop ready" once the loop has run long enough to be JIT-compiled, then a
 * checksum at the end so the work cannot be optimized away. Most CPU samples land in
 * HotLoop::step / HotLoop::mix (or in `run`, where C2 inlines them).
 */
public final class HotLoop {
	static volatile long sink;

	static long mix(long x)
	{
		x ^= x << 13;
		x ^= x >>> 7;
		x ^= x << 17;
		return x;
	}

	static long step(long x, int n)
	{
		for (int i = 0; i < n; i++)
			x = mix(x + i);
		return x;
	}

	static long run(long deadline)
	{
		long x = 42;
		long iter = 0;
		boolean ready = false;
		while (System.nanoTime() < deadline) {
			x = step(x, 10_000);
			if (!ready && ++iter == 20_000) {
				System.out.println("HotLoop ready");
				System.out.flush();
				ready = true;
			}
		}
		return x;
	}

	public static void main(String[] args)
	{
		long seconds = args.length > 0 ? Long.parseLong(args[0]) : 30;
		System.out.println("HotLoop start " + pid());
		System.out.flush();
		sink = run(System.nanoTime() + seconds * 1_000_000_000L);
		System.out.println("HotLoop done " + sink);
	}

	/* The JVM's pid, on Java 8 too (ProcessHandle is Java 9). */
	static String pid()
	{
		String n = java.lang.management.ManagementFactory.getRuntimeMXBean().getName();
		return n.substring(0, Math.max(0, n.indexOf('@')));
	}
}
