// SPDX-License-Identifier: MIT
/*
 * InlineChain - a hot a() -> b() -> c() chain that C2 inlines into one compiled method, for
 * tests of inlined-frame unfolding: a profile must show a;b;c, not only the outer method.
 *
 *   java InlineChain [SECONDS=20]
 *
 * c() does the work; a() and b() are small enough to be inlined at their hot call sites.
 */
public final class InlineChain {
	static volatile long sink;

	static long c(long x)
	{
		for (int i = 0; i < 64; i++) {
			x ^= x << 13;
			x ^= x >>> 7;
			x ^= x << 17;
		}
		return x;
	}

	static long b(long x)
	{
		return c(x + 1) ^ 0x9E3779B97F4A7C15L;
	}

	static long a(long x)
	{
		return b(x * 31 + 7);
	}

	static long loop(long deadline)
	{
		long x = 1;
		long n = 0;
		while (true) {
			for (int i = 0; i < 100_000; i++)
				x = a(x);
			if (++n == 20) {
				System.out.println("InlineChain ready");
				System.out.flush();
			}
			if (System.nanoTime() >= deadline)
				return x;
		}
	}

	public static void main(String[] args)
	{
		long seconds = args.length > 0 ? Long.parseLong(args[0]) : 20;
		System.out.println("InlineChain start " + ProcessHandle.current().pid());
		System.out.flush();
		sink = loop(System.nanoTime() + seconds * 1_000_000_000L);
		System.out.println("InlineChain done " + sink);
	}
}
