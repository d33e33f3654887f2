// SPDX-License-Identifier: MIT
/*
 * InterpChain - a fixed chain of methods in several classes, each entered once and never left
 * until the end, so they stay interpreted (under -Xint, or in mixed mode for all but the leaf,
 * whose loop is OSR-compiled): main -> ChainA.enter -> ChainB.relay -> ChainC.pass (instance)
 * -> ChainD.descend -> ChainE.spin, which spins on one known source line (SPIN_LINE below).
 *
 *   java InterpChain [SECONDS=30]
 *
 * Prints "InterpChain ready spin-line=N" when the leaf starts spinning, and a checksum at the end.
 */
public final class InterpChain {
	static volatile long sink;

	public static void main(String[] args)
	{
		long seconds = args.length > 0 ? Long.parseLong(args[0]) : 30;
		long deadline = System.nanoTime() + seconds * 1_000_000_000L;

		sink = ChainA.enter(deadline);
		System.out.println("InterpChain done " + sink);
	}
}

final class ChainA {
	static long enter(long deadline)
	{
		return ChainB.relay(deadline) + 1;
	}
}

final class ChainB {
	static long relay(long deadline)
	{
		return new ChainC().pass(deadline) + 2;
	}
}

final class ChainC {
	long pass(long deadline)
	{
		return ChainD.descend(deadline, this) + 3;
	}
}

final class ChainD {
	static long descend(long deadline, Object who)
	{
		return ChainE.spin(deadline) + who.hashCode() % 2;
	}
}

final class ChainE {
	static final int SPIN_LINE = 60; /* the line of the loop below: keep them in step */

	static long spin(long deadline)
	{
		long x = deadline | 1, i = 0;
		System.out.println("InterpChain ready spin-line=" + SPIN_LINE);
		while (true) { x = x * 6364136223846793005L + 1442695040888963407L; if ((++i & 0x3ffff) == 0 && System.nanoTime() > deadline) break; }
		return x;
	}
}
