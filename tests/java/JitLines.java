// SPDX-License-Identifier: MIT
/*
 * JitLines - a chain loop() -> outer() -> mid() -> spin() that C2 compiles into loop() with the
 * three callees inlined, spinning on one source line, for tests of line numbers in compiled and
 * inlined frames (`record --lines`). Each line the test expects carries a "@line NAME" marker;
 * the test reads their numbers from this file, so editing it cannot silently break the test.
 *
 *   java JitLines [SECONDS=20]
 */
public final class JitLines {
	static volatile long sink;

	static long spin(long x)
	{
		for (int i = 0; i < 1024; i++) x = (x * 0x5DEECE66DL + 0xBL) ^ (x >>> 17); // @line spin
		return x;
	}

	static long mid(long x)
	{
		return spin(x + 1) ^ 0x9E3779B97F4A7C15L; // @line mid
	}

	static long outer(long x)
	{
		return mid(x * 31 + 7); // @line outer
	}

	static long loop(long deadline)
	{
		long x = 1;
		long n = 0;
		while (true) {
			for (int i = 0; i < 1000; i++)
				x = outer(x); // @line loop
			if (++n == 100) {
				System.out.println("JitLines ready");
				System.out.flush();
			}
			if (System.nanoTime() >= deadline)
				return x;
		}
	}

	public static void main(String[] args)
	{
		long seconds = args.length > 0 ? Long.parseLong(args[0]) : 20;
		System.out.println("JitLines start " + ProcessHandle.current().pid());
		System.out.flush();
		sink = loop(System.nanoTime() + seconds * 1_000_000_000L);
		System.out.println("JitLines done " + sink);
	}
}
