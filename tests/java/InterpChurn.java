// SPDX-License-Identifier: MIT
/*
 * InterpChurn - interpreted code whose classes are unloaded and whose metadata memory gets
 * reused: generation N is ClassChurn's template renamed ChurnGenNNNN, defined by its own class
 * loader and run (interpreted under -Xint) on a thread named gen-NNNN, then unloaded before
 * generation N + 1 is loaded, so a profile can check that no sample of thread gen-NNNN names
 * another generation's class.
 *
 *   java -Xint InterpChurn [GENERATIONS=10] [MS_PER_GENERATION=600]
 *
 * Prints "InterpChurn gen N unloaded|not-unloaded" per generation and "InterpChurn done".
 */
import java.lang.ref.WeakReference;
import java.util.function.LongUnaryOperator;

public final class InterpChurn {
	static volatile long sink;

	static WeakReference<ClassLoader> runGeneration(byte[] template, int gen, long ms)
		throws Exception
	{
		String name = String.format("ChurnGen%04d", gen);
		TemplateClass.Loader loader = TemplateClass.copy(template, ClassChurn.TEMPLATE, name);
		LongUnaryOperator op =
			(LongUnaryOperator)loader.loadClass(name).getDeclaredConstructor().newInstance();
		Thread t = new Thread(() -> {
			long end = System.nanoTime() + ms * 1_000_000L;
			while (System.nanoTime() < end)
				sink += op.applyAsLong(Math.min(end, System.nanoTime() + 5_000_000L));
		}, String.format("gen-%04d", gen));
		t.start();
		t.join();
		return new WeakReference<>(loader);
	}

	public static void main(String[] args) throws Exception
	{
		int gens = args.length > 0 ? Integer.parseInt(args[0]) : 10;
		long ms = args.length > 1 ? Long.parseLong(args[1]) : 600;
		byte[] template = TemplateClass.bytes(ClassChurn.TEMPLATE);
		System.out.println("InterpChurn start");
		for (int g = 1; g <= gens; g++) {
			WeakReference<ClassLoader> ref = runGeneration(template, g, ms);
			for (int i = 0; i < 50 && ref.get() != null; i++) {
				System.gc();
				Thread.sleep(20);
			}
			System.out.println("InterpChurn gen " + g + (ref.get() == null ? " unloaded" : " not-unloaded"));
			System.out.flush();
		}
		System.out.println("InterpChurn done " + sink);
	}
}
