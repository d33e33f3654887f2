// SPDX-License-Identifier: MIT
/*
 * JavacWorkload - a JIT-heavy workload: the in-process javax.tools compiler compiles a few
 * hundred generated classes, held in memory (nothing is written to disk).
 *
 *   java JavacWorkload [CLASSES=300] [ROUNDS=1] [HOLD_SECONDS=0]
 *
 * Prints "JavacWorkload round R: C classes in T ms" per round and "JavacWorkload total T ms",
 * then stays alive (idle) for HOLD_SECONDS, so its code cache can be inspected.
 * Needs a JDK (module jdk.compiler), not a bare JRE.
 */
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import javax.tools.FileObject;
import javax.tools.ForwardingJavaFileManager;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileManager;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;

public final class JavacWorkload {
	static final class Source extends SimpleJavaFileObject {
		final String code;

		Source(String name, String code)
		{
			super(URI.create("string:///gen/" + name + ".java"), Kind.SOURCE);
			this.code = code;
		}

		@Override
		public CharSequence getCharContent(boolean ignoreEncodingErrors)
		{
			return code;
		}
	}

	static final class Sink extends SimpleJavaFileObject {
		Sink(String name, Kind kind)
		{
			super(URI.create("mem:///" + name.replace('.', '/') + kind.extension), kind);
		}

		@Override
		public OutputStream openOutputStream()
		{
			return new ByteArrayOutputStream();
		}
	}

	static String source(int i)
	{
		String prev = i > 0 ? "C" + (i - 1) : "Object";
		StringBuilder sb = new StringBuilder();
		sb.append("package gen;\nimport java.util.*;\n");
		sb.append("public class C").append(i).append(" {\n");
		sb.append("  private final Map<String, List<Integer>> m = new HashMap<>();\n");
		for (int k = 0; k < 8; k++) {
			sb.append("  public int f").append(k).append("(int x, String s) {\n");
			sb.append("    int r = x * ").append(k + 3).append(" + s.length();\n");
			sb.append("    for (int j = 0; j < x % 7; j++) r ^= (r << 3) + j;\n");
			sb.append("    List<Integer> l = m.computeIfAbsent(s + ").append(k).append(", q -> new ArrayList<>());\n");
			sb.append("    l.add(r);\n");
			sb.append("    return l.stream().mapToInt(Integer::intValue).sum() + (r > 0 ? ").append(k).append(" : -1);\n");
			sb.append("  }\n");
		}
		sb.append("  public ").append(prev).append(" prev() { return null; }\n");
		sb.append("  @Override public String toString() { return \"C").append(i).append("\" + m.size(); }\n");
		sb.append("}\n");
		return sb.toString();
	}

	public static void main(String[] args) throws Exception
	{
		int classes = args.length > 0 ? Integer.parseInt(args[0]) : 300;
		int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 1;
		long hold = args.length > 2 ? Long.parseLong(args[2]) : 0;
		JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
		if (javac == null)
			throw new IllegalStateException("no system Java compiler: run with a JDK");
		List<JavaFileObject> units = new ArrayList<>();
		for (int i = 0; i < classes; i++)
			units.add(new Source("C" + i, source(i)));
		long total = System.nanoTime();
		for (int r = 1; r <= rounds; r++) {
			long t0 = System.nanoTime();
			StandardJavaFileManager std = javac.getStandardFileManager(null, null, null);
			JavaFileManager fm = new ForwardingJavaFileManager<StandardJavaFileManager>(std) {
				@Override
				public JavaFileObject getJavaFileForOutput(Location loc, String name, JavaFileObject.Kind kind,
									   FileObject sibling)
				{
					return new Sink(name, kind);
				}
			};
			Boolean ok = javac.getTask(null, fm, null, List.of("-proc:none", "-g:none"), null, units).call();
			if (!ok)
				throw new IllegalStateException("generated sources failed to compile");
			System.out.printf("JavacWorkload round %d: %d classes in %d ms%n", r, classes,
					  (System.nanoTime() - t0) / 1_000_000);
		}
		System.out.printf("JavacWorkload total %d ms%n", (System.nanoTime() - total) / 1_000_000);
		System.out.flush();
		if (hold > 0)
			Thread.sleep(hold * 1000);
	}
}
