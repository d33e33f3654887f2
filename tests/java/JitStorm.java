// SPDX-License-Identifier: MIT
/*
 * JitStorm - a JIT storm on a bare JRE (no javac): thousands of compiled-method events in a
 * few seconds, the worst case for any JIT agent (bench/agent/jdks.sh).
 *
 *   java JitStorm [CLASSES=300] [CALLS=20000]
 *
 * Defines CLASSES copies of StormGen0000 (StormGen0001, ...: its bytes with the name patched),
 * each by its own class loader, and calls each copy CALLS times, so that its ten methods are
 * compiled at C1's tier and then at C2's, with inlining. The loaders are dropped as it goes,
 * so classes and their code are unloaded too. Class files of Java 8: runs on JDK 8 and later.
 * Prints "JitStorm C classes in T ms".
 */
import java.util.function.LongUnaryOperator;

public final class JitStorm {
	static final String TEMPLATE = "StormGen0000";
	static volatile long sink;

	public static void main(String[] args) throws Exception
	{
		int classes = args.length > 0 ? Integer.parseInt(args[0]) : 300;
		int calls = args.length > 1 ? Integer.parseInt(args[1]) : 20000;
		if (classes < 1 || classes > 9999 || calls < 1)
			throw new IllegalArgumentException("usage: JitStorm [CLASSES=1..9999] [CALLS>=1]");
		byte[] template = TemplateClass.bytes(TEMPLATE);
		long t0 = System.nanoTime();
		long x = 1;
		for (int c = 1; c <= classes; c++) {
			String name = String.format("StormGen%04d", c);
			TemplateClass.Loader loader = TemplateClass.copy(template, TEMPLATE, name);
			LongUnaryOperator op =
				(LongUnaryOperator)loader.loadClass(name).getDeclaredConstructor().newInstance();
			for (int i = 0; i < calls; i++)
				x = op.applyAsLong(x + i);
		}
		sink = x;
		System.out.println("JitStorm " + classes + " classes in " + (System.nanoTime() - t0) / 1000000
				   + " ms");
	}
}
