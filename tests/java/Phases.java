// SPDX-License-Identifier: MIT
/*
 * Phases - a known answer for the time view: one thread, "phases", whose hot method changes at
 * known times: phaseA for 3 s, then phaseB, phaseC, phaseD, 3 s each, then phaseA again.
 *
 *   java Phases [SECONDS=30]
 *
 * Warms the four methods up (so they are compiled before the first phase), prints
 * "Phases ready", then for each phase a line "Phases phase NAME at NANOS" with System.nanoTime()
 * (CLOCK_MONOTONIC on Linux, the clock the collector stamps samples with) when it starts.
 */
public final class Phases {
	static volatile long sink;

	static long spin(long x, long deadline)
	{
		while (System.nanoTime() < deadline) {
			for (int i = 0; i < 20_000; i++) {
				x ^= x << 13;
				x ^= x >>> 7;
				x ^= x << 17;
			}
		}
		return x;
	}

	static long phaseA(long x, long deadline)
	{
		return spin(x + 1, deadline);
	}

	static long phaseB(long x, long deadline)
	{
		return spin(x + 2, deadline);
	}

	static long phaseC(long x, long deadline)
	{
		return spin(x + 3, deadline);
	}

	static long phaseD(long x, long deadline)
	{
		return spin(x + 4, deadline);
	}

	static long phase(int k, long x, long deadline)
	{
		switch (k) {
		case 0:
			return phaseA(x, deadline);
		case 1:
			return phaseB(x, deadline);
		case 2:
			return phaseC(x, deadline);
		default:
			return phaseD(x, deadline);
		}
	}

	static void run(long seconds)
	{
		final String[] names = { "phaseA", "phaseB", "phaseC", "phaseD" };
		long x = 42;

		for (int w = 0; w < 400; w++)
			x = phase(w % 4, x, System.nanoTime() + 1_000_000);
		System.out.println("Phases ready");
		long start = System.nanoTime(), end = start + seconds * 1_000_000_000L;
		for (int p = 0; start + p * 3_000_000_000L < end; p++) {
			long at = start + p * 3_000_000_000L;

			System.out.println("Phases phase " + names[p % 4] + " at " + at);
			System.out.flush();
			x = phase(p % 4, x, Math.min(at + 3_000_000_000L, end));
		}
		sink = x;
	}

	public static void main(String[] args) throws Exception
	{
		long seconds = args.length > 0 ? Long.parseLong(args[0]) : 30;
		Thread t = new Thread(() -> run(seconds), "phases");
		t.start();
		t.join();
		System.out.println("Phases done " + sink);
	}
}
