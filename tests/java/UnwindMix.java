// SPDX-License-Identifier: MIT
/*
 * UnwindMix - workloads whose stacks only a complete unwinder gets right:
 *
 *   java UnwindMix MODE [DEPTH=40] [SECONDS=30] [JNI_LIB]
 *
 *   deep   main -> deep -> level x DEPTH (not inlined) -> spin: a deep compiled Java chain
 *   mix    the deep chain whose leaf also deflates (native libz), writes to /dev/null (kernel
 *          frames) and hashes (compiled code): the answer-key workload
 *   deopt  main -> outer -> inner, outer compiled with a class-hierarchy assumption that a
 *          class loaded later breaks while outer is on the stack (deoptimised in place; run
 *          with -XX:CompileCommand=dontinline,UnwindMix::inner so inner is a real call)
 *   mega   main -> mega -> Shape.area through a vtable stub (five receivers, megamorphic)
 *   exc    main -> thrower x DEPTH -> throw; caught at the top: exceptions through compiled
 *          frames, again and again
 *   jni    main -> jni -> UnwindMix.nativeSum (JNI_LIB, C) -> UnwindMix.callback (Java)
 *
 * Prints "UnwindMix ready" once warmed up (compiled), then "deopt-now" when the deopt mode
 * breaks its assumption, and a checksum at the end.
 */
import java.io.FileOutputStream;
import java.io.IOException;
import java.util.zip.Deflater;

public final class UnwindMix {
	static volatile long sink;
	static volatile long innerNs = 1000; // the same branches warm and long: no uncommon trap
	static long deadline;

	// ---- deep / mix ---------------------------------------------------------------------

	static long spin(long x)
	{
		for (int i = 0; i < 2000; i++) {
			x ^= x << 13;
			x ^= x >>> 7;
			x ^= x << 17;
		}
		return x;
	}

	static final byte[] buf = new byte[4096];
	static final byte[] out = new byte[8192];
	static final Deflater deflater = new Deflater(1);
	static FileOutputStream devnull;

	static long mixLeaf(long x) throws IOException
	{
		switch ((int)(x & 15)) {
		case 0:
			deflater.reset();
			deflater.setInput(buf);
			deflater.finish();
			return x + deflater.deflate(out);
		case 1:
			devnull.write(buf, 0, 512);
			return x + 1;
		default:
			return spin(x);
		}
	}

	static long level(int n, long x, boolean mix) throws IOException
	{
		if (n == 0)
			return mix ? mixLeaf(x) : spin(x);
		return level(n - 1, x + n, mix) + 1;
	}

	static void deep(int depth, boolean mix) throws IOException
	{
		long x = 1;
		while (System.nanoTime() < deadline)
			x = level(depth, x, mix);
		sink = x;
	}

	// ---- deopt ----------------------------------------------------------------------------

	static abstract class Shape {
		abstract long area(long x);
	}

	static final class Square extends Shape {
		long area(long x)
		{
			return x * x + 1;
		}
	}

	static long inner(long x)
	{
		long end = System.nanoTime() + innerNs;
		do {
			x = spin(x);
		} while (System.nanoTime() < end);
		return x;
	}

	static long outer(Shape s, long x)
	{
		x = s.area(x); // one Shape subclass loaded: inlined on a CHA dependency
		return inner(x) + s.area(x);
	}

	static void deopt() throws Exception
	{
		Shape s = new Square();
		long x = 1, warm = System.nanoTime() + 3_000_000_000L;
		while (System.nanoTime() < warm) // until outer is compiled for good
			x = outer(s, x);
		sink = x;
		innerNs = 3_000_000_000L;
		System.out.println("UnwindMix ready");
		Thread breaker = new Thread(() -> {
			try {
				Thread.sleep(800);
				// A second subclass breaks outer's assumption while outer sits in inner.
				Class<?> c = Class.forName("UnwindMix$Circle");
				Object o = c.getDeclaredConstructor().newInstance();
				sink += o.hashCode();
				System.out.println("deopt-now");
			} catch (Exception e) {
				throw new RuntimeException(e);
			}
		}, "breaker");
		breaker.start();
		while (System.nanoTime() < deadline)
			x = outer(s, x);
		sink = x;
	}

	static final class Circle extends Shape {
		long area(long x)
		{
			return 3 * x * x;
		}
	}

	// ---- mega -----------------------------------------------------------------------------

	static abstract class Poly {
		abstract long f(long x);
	}

	static final class P1 extends Poly {
		long f(long x)
		{
			return spin(x + 1);
		}
	}

	static final class P2 extends Poly {
		long f(long x)
		{
			return spin(x + 2);
		}
	}

	static final class P3 extends Poly {
		long f(long x)
		{
			return spin(x + 3);
		}
	}

	static final class P4 extends Poly {
		long f(long x)
		{
			return spin(x + 4);
		}
	}

	static final class P5 extends Poly {
		long f(long x)
		{
			return spin(x + 5);
		}
	}

	static long mega(Poly[] ps, long x)
	{
		for (int i = 0; i < 1000; i++)
			x = ps[i % ps.length].f(x); // megamorphic: a vtable stub call
		return x;
	}

	// ---- exc ------------------------------------------------------------------------------

	static final class Boom extends RuntimeException {
		Boom(long v)
		{
			super("boom " + v);
		}
	}

	static long thrower(int n, long x)
	{
		if (n == 0)
			throw new Boom(x * 31 + 7);
		return thrower(n - 1, x + n) + 1;
	}

	static long exc(int depth, long x)
	{
		try {
			return thrower(depth, x);
		} catch (Boom b) {
			return x + b.getMessage().length();
		}
	}

	// ---- jni ------------------------------------------------------------------------------

	static native long nativeSum(long x, int rounds);

	static long callback(long x)
	{
		return spin(x);
	}

	static long jni(long x)
	{
		return nativeSum(x, 2000);
	}

	public static void main(String[] args) throws Exception
	{
		String mode = args[0];
		int depth = args.length > 1 ? Integer.parseInt(args[1]) : 40;
		long seconds = args.length > 2 ? Long.parseLong(args[2]) : 30;

		devnull = new FileOutputStream("/dev/null");
		deadline = System.nanoTime() + seconds * 1_000_000_000L;
		switch (mode) {
		case "deep":
		case "mix": {
			boolean mix = mode.equals("mix");
			for (int i = 0; i < 2000; i++)
				level(depth, i, mix);
			System.out.println("UnwindMix ready");
			deep(depth, mix);
			break;
		}
		case "deopt":
			deopt();
			break;
		case "mega": {
			Poly[] ps = { new P1(), new P2(), new P3(), new P4(), new P5() };
			long x = 1;
			for (int i = 0; i < 200; i++)
				x = mega(ps, x);
			System.out.println("UnwindMix ready");
			while (System.nanoTime() < deadline)
				x = mega(ps, x);
			sink = x;
			break;
		}
		case "exc": {
			long x = 1;
			for (int i = 0; i < 20000; i++)
				x = exc(depth, x);
			System.out.println("UnwindMix ready");
			while (System.nanoTime() < deadline)
				x = exc(depth, x);
			sink = x;
			break;
		}
		case "jni": {
			System.load(args[3]);
			long x = 1;
			for (int i = 0; i < 20000; i++)
				x = jni(x);
			System.out.println("UnwindMix ready");
			while (System.nanoTime() < deadline)
				x = jni(x);
			sink = x;
			break;
		}
		default:
			throw new IllegalArgumentException("unknown mode " + mode);
		}
		System.out.println("UnwindMix done " + sink);
	}
}
