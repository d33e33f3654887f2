// SPDX-License-Identifier: MIT
/*
 * TemplateClass - copies of a template class under new names, each defined by a class loader of
 * its own (ClassChurn, JitStorm): the template's class file read from the class path, every
 * occurrence of its name patched to the copy's name (of the same length), and a loader that
 * defines that one class and delegates every other name. Java 8 class files.
 */
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

final class TemplateClass {
	private TemplateClass()
	{
	}

	/* The loader of one class, NAME, defined from BYTES. */
	static final class Loader extends ClassLoader {
		private final String name;
		private final byte[] bytes;

		Loader(String name, byte[] bytes)
		{
			super(TemplateClass.class.getClassLoader());
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

	/* The class file of TEMPLATE, from the class path. */
	static byte[] bytes(String template) throws IOException
	{
		try (InputStream in = TemplateClass.class.getResourceAsStream(template + ".class")) {
			if (in == null)
				throw new IOException(template + ".class not on the class path");
			ByteArrayOutputStream out = new ByteArrayOutputStream();
			byte[] buf = new byte[4096];
			for (int k; (k = in.read(buf)) > 0;) /* InputStream.transferTo is Java 9 */
				out.write(buf, 0, k);
			return out.toByteArray();
		}
	}

	/* SRC with every occurrence of the name TEMPLATE replaced by TO (the same length). */
	static byte[] rename(byte[] src, String template, String to)
	{
		byte[] from = template.getBytes(StandardCharsets.US_ASCII);
		byte[] repl = to.getBytes(StandardCharsets.US_ASCII);
		byte[] b = src.clone();

		if (repl.length != from.length)
			throw new IllegalArgumentException(to + " is not as long as " + template);
		for (int i = 0; i + from.length <= b.length; i++) {
			int j = 0;
			while (j < from.length && b[i + j] == from[j])
				j++;
			if (j == from.length)
				System.arraycopy(repl, 0, b, i, repl.length);
		}
		return b;
	}

	/* A loader defining the copy of TEMPLATE (its class file TEMPLATE_BYTES) named NAME. */
	static Loader copy(byte[] templateBytes, String template, String name)
	{
		return new Loader(name, rename(templateBytes, template, name));
	}
}
