// SPDX-License-Identifier: MIT
/*
 * ChurnGen0000 - template of one ClassChurn generation. ClassChurn renames it to ChurnGenNNNN
 * by patching the fixed-width name in the class bytes, so keep the name exactly 12 chars.
 *
 * applyAsLong(deadline) spins until System.nanoTime() >= deadline and returns a checksum.
 */
public final class ChurnGen0000 implements java.util.function.LongUnaryOperator {
	static long spin(long x)
	{
		for (int i = 0; i < 1000; i++) {
			x ^= x << 13;
			x ^= x >>> 7;
			x ^= x << 17;
		}
		return x;
	}

	@Override
	public long applyAsLong(long deadline)
	{
		long x = deadline | 1;
		while (System.nanoTime() < deadline)
			x = spin(x);
		return x;
	}
}
