// SPDX-License-Identifier: MIT
/*
 * ClassChurn - JIT code that is unloaded and whose addresses get reused.
 *
 *   java ClassChurn [GENERATIONS=8] [MS_PER_GENERATION=1500] [GATE]
 *
 * Generation N is class ChurnGenNNNN (ChurnGen0000's bytes with the name patched), defined by
 * its own class loader. It runs hot for MS_PER_GENERATION ms, is JIT-compiled, then its loader
 * is dropped and collected so the class and its compiled code are unloaded; the next
 * generation's code is compiled into the freed code cache. Timestamps are System.nanoTime(),
 * which is CLOCK_MONOTONIC on Linux, the clock of perf samples and agent events:
 *
 *   ClassChurn gen N start T_NS
 *   ClassChurn gen N end T_NS cpu CPU_NS
 *   ClassChurn gen N unloaded T_NS      (or "not-unloaded" if GC kept the loader)
 *
 * CPU_NS is the CPU time the running thread had from start to end (its thread CPU clock; -1
 * where the JVM cannot measure it): a generation runs MS_PER_GENERATION ms of wall time, and
 * on a busy machine one generation may get much less of a CPU in them than another.
 * With GATE (a file path), generation 1 starts once that file exists ("ClassChurn gate open"),
 * or the program exits with status 2 after 120 s without it.
 */
import java.io.File;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.lang.ref.WeakReference;
import java.util.function.LongUnaryOperator;

public final class ClassChurn {
	static final String TEMPLATE = "ChurnGen0000";
	static volatile long sink;

	static WeakReference<ClassLoader> runGeneration(byte[] template, int gen, long ms) throws Exception
	{
		String name = String.format("ChurnGen%04d", gen);
		TemplateClass.Loader loader = TemplateClass.copy(template, TEMPLATE, name);
		LongUnaryOperator op = (LongUnaryOperator)loader.loadClass(name).getDeclaredConstructor().newInstance();
		ThreadMXBean mx = ManagementFactory.getThreadMXBean();
		boolean cpu = mx.isCurrentThreadCpuTimeSupported();
		System.out.println("ClassChurn gen " + gen + " start " + System.nanoTime());
		System.out.flush();
		long cpu0 = cpu ? mx.getCurrentThreadCpuTime() : 0;
		long end = System.nanoTime() + ms * 1_000_000L;
		// Short calls so applyAsLong is compiled normally, not only on-stack-replaced.
		while (System.nanoTime() < end)
			sink += op.applyAsLong(Math.min(end, System.nanoTime() + 5_000_000L));
		long used = cpu ? mx.getCurrentThreadCpuTime() - cpu0 : -1;
		System.out.println("ClassChurn gen " + gen + " end " + System.nanoTime() + " cpu " + used);
		System.out.flush();
		return new WeakReference<>(loader);
	}

	public static void main(String[] args) throws Exception
	{
		int gens = args.length > 0 ? Integer.parseInt(args[0]) : 8;
		long ms = args.length > 1 ? Long.parseLong(args[1]) : 1500;
		byte[] template = TemplateClass.bytes(TEMPLATE);
		System.out.println("ClassChurn start " + HotLoop.pid());
		System.out.flush();
		if (args.length > 2) {
			File gate = new File(args[2]);
			long giveUp = System.nanoTime() + 120_000_000_000L;
			while (!gate.exists()) {
				if (System.nanoTime() > giveUp) {
					System.out.println("ClassChurn gate " + gate + " never opened");
					System.exit(2);
				}
				Thread.sleep(10);
			}
			System.out.println("ClassChurn gate open");
		}
		for (int g = 1; g <= gens; g++) {
			WeakReference<ClassLoader> ref = runGeneration(template, g, ms);
			for (int i = 0; i < 50 && ref.get() != null; i++) {
				System.gc();
				Thread.sleep(20);
			}
			System.out.println("ClassChurn gen " + g + (ref.get() == null ? " unloaded " : " not-unloaded ")
					   + System.nanoTime());
			System.out.flush();
		}
		System.out.println("ClassChurn done " + sink);
	}
}
