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
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.function.LongUnaryOperator;

public final class JitStorm {
	static final String TEMPLATE = "StormGen0000";
	static volatile long sink;

	static final class OneClassLoader extends ClassLoader {
		private final String name;
		private final byte[] bytes;

		OneClassLoader(String name, byte[] bytes)
		{
			super(JitStorm.class.getClassLoader());
			this.name = name;
			this.bytes = bytes;
		}

		@Override
		protected Class<?> loadClass(String n, boolean resolve) throws ClassNotFoundException
		{
			if (!n.equals(name))
				return super.loadClass(n, resolve);
			synchronized (getClassLoadingLock(n)) {
				Class<?> c = findLoadedClass(n);
				if (c == null)
					c = defineClass(n, bytes, 0, bytes.length);
				return c;
			}
		}
	}

	static byte[] templateBytes() throws IOException
	{
		try (InputStream in = JitStorm.class.getResourceAsStream(TEMPLATE + ".class")) {
			if (in == null)
				throw new IOException(TEMPLATE + ".class not on the class path");
			ByteArrayOutputStream out = new ByteArrayOutputStream();
			byte[] buf = new byte[4096];
			for (int k; (k = in.read(buf)) > 0;) /* InputStream.transferTo is Java 9 */
				out.write(buf, 0, k);
			return out.toByteArray();
		}
	}

	/* Every occurrence of the template's name replaced by TO (same length). */
	static byte[] rename(byte[] src, String to)
	{
		byte[] from = TEMPLATE.getBytes(StandardCharsets.US_ASCII);
		byte[] repl = to.getBytes(StandardCharsets.US_ASCII);
		byte[] b = src.clone();
		for (int i = 0; i + from.length <= b.length; i++) {
			int j = 0;
			while (j < from.length && b[i + j] == from[j])
				j++;
			if (j == from.length)
				System.arraycopy(repl, 0, b, i, repl.length);
		}
		return b;
	}

	public static void main(String[] args) throws Exception
	{
		int classes = args.length > 0 ? Integer.parseInt(args[0]) : 300;
		int calls = args.length > 1 ? Integer.parseInt(args[1]) : 20000;
		if (classes < 1 || classes > 9999 || calls < 1)
			throw new IllegalArgumentException("usage: JitStorm [CLASSES=1..9999] [CALLS>=1]");
		byte[] template = templateBytes();
		long t0 = System.nanoTime();
		long x = 1;
		for (int c = 1; c <= classes; c++) {
			String name = String.format("StormGen%04d", c);
			OneClassLoader loader = new OneClassLoader(name, rename(template, name));
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
