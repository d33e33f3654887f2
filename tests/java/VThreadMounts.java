// SPDX-License-Identifier: MIT
import java.lang.reflect.Method;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * VThreadMounts THREADS WORK_US PARK_US: THREADS virtual threads (JDK 21+), each looping
 * WORK_US microseconds of computation and then a park of PARK_US microseconds, so every loop
 * unmounts and mounts its thread once. Prints "VThreadMounts ready", then every 100 ms
 * "vtm NANOTIME LOOPS" (the loops finished by all threads so far) for a bench to read its rate.
 * Compiled against JDK 17: the virtual-thread executor is looked up by reflection.
 */
public class VThreadMounts {
	static final AtomicLong loops = new AtomicLong();
	static volatile long sink;

	static void work(long ns) {
		long end = System.nanoTime() + ns, x = sink;
		while (System.nanoTime() < end)
			for (int i = 0; i < 64; i++)
				x = x * 6364136223846793005L + 1442695040888963407L;
		sink = x;
	}

	public static void main(String[] args) throws Exception {
		int threads = Integer.parseInt(args[0]);
		long workNs = Long.parseLong(args[1]) * 1000, parkNs = Long.parseLong(args[2]) * 1000;
		Method m = Executors.class.getMethod("newVirtualThreadPerTaskExecutor");
		ExecutorService ex = (ExecutorService) m.invoke(null);
		for (int t = 0; t < threads; t++)
			ex.submit(() -> {
				for (;;) {
					work(workNs);
					LockSupport.parkNanos(parkNs);
					loops.incrementAndGet();
				}
			});
		System.out.println("VThreadMounts ready");
		System.out.flush();
		for (;;) {
			Thread.sleep(100);
			System.out.println("vtm " + System.nanoTime() + " " + loops.get());
			System.out.flush();
		}
	}
}
