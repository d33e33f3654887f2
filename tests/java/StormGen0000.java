// SPDX-License-Identifier: MIT
/*
 * StormGen0000 - template of one JitStorm class. JitStorm renames it to StormGenNNNN by
 * patching the fixed-width name in the class bytes, so keep the name exactly 12 chars.
 *
 * Ten small methods of different shapes (loops, a switch, an array, calls that C2 inlines):
 * each copy's methods are compiled on their own, at C1's and then C2's tier, with inlining.
 */
public final class StormGen0000 implements java.util.function.LongUnaryOperator {
	static long mix(long x)
	{
		x ^= x << 13;
		x ^= x >>> 7;
		return x ^ (x << 17);
	}

	static long fold(long x)
	{
		long s = x;
		for (int i = 0; i < 8; i++)
			s = s * 31 + (x >>> i);
		return s;
	}

	static long pick(long x)
	{
		switch ((int)(x & 7)) {
		case 0:
			return x + 1;
		case 1:
			return x * 3;
		case 2:
			return x ^ 0x5bd1e995L;
		case 3:
			return x >>> 3;
		case 4:
			return ~x;
		case 5:
			return x - 7;
		case 6:
			return x << 2;
		default:
			return x | 1;
		}
	}

	static long table(long x)
	{
		long[] t = { x, x + 1, x + 2, x + 3 };
		for (int i = 1; i < t.length; i++)
			t[i] ^= t[i - 1] >>> 1;
		return t[3];
	}

	static long bits(long x)
	{
		return Long.bitCount(x) + Long.numberOfTrailingZeros(x | 1) + Long.rotateLeft(x, 9);
	}

	static long pair(long x)
	{
		return mix(x) + fold(x >>> 1);
	}

	static long branch(long x)
	{
		return (x & 1) == 0 ? pick(x) : table(x);
	}

	static long chain(long x)
	{
		return pair(branch(x)) ^ bits(x);
	}

	static long odd(long x)
	{
		long s = 0;
		for (long v = x & 15; v > 0; v--)
			s += (v & 1) == 0 ? v : -v;
		return s;
	}

	@Override
	public long applyAsLong(long x)
	{
		return chain(x) + odd(x);
	}
}
