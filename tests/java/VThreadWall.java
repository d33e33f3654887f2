// SPDX-License-Identifier: MIT
import java.lang.reflect.Method;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.LockSupport;

/**
 * VThreadWall [THREADS [COMPUTE_MS [AWAIT_MS [CHURN_PER_S [PIN_MS [IDLE GO_FILE]]]]]]: THREADS
 * virtual threads (JDK 21+, default 8), each serving requests in a loop: handle() spends
 * COMPUTE_MS (default 2) computing in compute() and then sleeps AWAIT_MS (default 8) in await()
 * (Thread.sleep: the thread unmounts). Each thread times its own handler and its await with
 * System.nanoTime. Prints "VThreadWall ready", then every 100 ms "vtw NANOTIME_US HANDLER_US
 * AWAIT_US COMPUTE_US": the time all threads spent in handle(), await() and compute() so far
 * (requests finished, plus the one in progress up to now), NANOTIME_US the System.nanoTime of
 * the line in microseconds. Compiled against JDK 17: the virtual-thread executor is looked up
 * by reflection. CHURN_PER_S (default 0): besides, about that many short-lived virtual threads
 * a second, named "vt-worker-N" (N counting up), each parking 1 ms in churnWait() once; the
 * lines then end with " vtc STARTED", the churned threads started so far. PIN_MS (default 0):
 * besides, one virtual thread named "vt-pin-0" loops: PIN_MS pinned to its carrier in
 * pinnedWait() (a sleep inside a class initializer, which pins on every JDK: a fresh class each
 * time), then 3 x PIN_MS unpinned in Thread.sleep; the lines then end with " vtp PINNED_US",
 * its time asleep pinned so far. When PIN_MS or IDLE is set, the lines end with
 * " vtu UNMOUNTED_US": the time the handlers spent in await() and vt-pin-0 in its unpinned
 * sleeps so far (their waits that unmount). IDLE (default 0) with GO_FILE: when the file
 * GO_FILE appears, IDLE virtual threads named "vt-idle-N" start, about 2048 a second, and each
 * parks in idleWait(); when it is gone again, they are unparked and end; the lines then end
 * with " vti ALIVE", the idle threads started and not yet ended.
 */
public class VThreadWall {
	static final AtomicLong handlerNs = new AtomicLong(), awaitNs = new AtomicLong(),
				computeNs = new AtomicLong();
	static long[] inHandler, inAwait, inCompute; /* start of the phase in progress, 0: none */
	static volatile long sink;

	static void compute(long ns) {
		long end = System.nanoTime() + ns, x = sink;
		while (System.nanoTime() < end)
			for (int i = 0; i < 64; i++)
				x = x * 6364136223846793005L + 1442695040888963407L;
		sink = x;
	}

	static void await(long ms) throws InterruptedException {
		Thread.sleep(ms);
	}

	static void handle(int t, long computeMs, long awaitMs) throws InterruptedException {
		long t0 = System.nanoTime();
		inCompute[t] = t0;
		compute(computeMs * 1000000);
		long t1 = System.nanoTime();
		inCompute[t] = 0;
		computeNs.addAndGet(t1 - t0);
		inAwait[t] = t1;
		await(awaitMs);
		long t2 = System.nanoTime();
		inAwait[t] = 0;
		awaitNs.addAndGet(t2 - t1);
	}

	/* The total so far: what finished, and what is in progress up to now. */
	static long upTo(AtomicLong done, long[] in, long now) {
		long s = done.get();
		for (long t0 : in)
			if (t0 != 0 && t0 < now)
				s += now - t0;
		return s / 1000;
	}

	static final AtomicLong churned = new AtomicLong(), pinnedNs = new AtomicLong();
	static final long[] inPinned = new long[1];
	public static volatile long pinMs;
	static byte[] pinBytes;

	/* Initialized once per loader: a fresh class for each pinnedWait(). */
	public static class PinInit {
		static {
			pinSleep();
		}
	}

	/* The pinned sleep, timed. */
	public static void pinSleep() {
		long t0 = System.nanoTime();
		inPinned[0] = t0;
		try {
			Thread.sleep(pinMs);
		} catch (InterruptedException e) {
			Thread.currentThread().interrupt();
		}
		inPinned[0] = 0;
		pinnedNs.addAndGet(System.nanoTime() - t0);
	}

	/* Defines PinInit anew. */
	static class PinLoader extends ClassLoader {
		PinLoader() {
			super(VThreadWall.class.getClassLoader());
		}

		@Override
		protected Class<?> loadClass(String n, boolean r) throws ClassNotFoundException {
			if (!n.equals(PinInit.class.getName()))
				return super.loadClass(n, r);
			Class<?> c = findLoadedClass(n);
			return c != null ? c : defineClass(n, pinBytes, 0, pinBytes.length);
		}
	}

	static void pinnedWait() throws Exception {
		Class.forName(PinInit.class.getName(), true, new PinLoader());
	}

	static void pinLoop() {
		try {
			for (;;) {
				pinnedWait();
				unpinnedSleep(3 * pinMs);
			}
		} catch (Exception e) {
			throw new RuntimeException(e);
		}
	}

	static final AtomicLong unpinnedNs = new AtomicLong(), idleAlive = new AtomicLong();
	static final long[] inUnpinned = new long[1];
	static volatile boolean idleEnd;

	/* vt-pin-0's sleep that unmounts, timed. */
	static void unpinnedSleep(long ms) throws InterruptedException {
		long t0 = System.nanoTime();
		inUnpinned[0] = t0;
		Thread.sleep(ms);
		inUnpinned[0] = 0;
		unpinnedNs.addAndGet(System.nanoTime() - t0);
	}

	static final int IDLE_PER_S = 2048;

	static void idleWait() {
		while (!idleEnd)
			LockSupport.park();
	}

	/* ts.length() idle virtual threads, about IDLE_PER_S a second, each parked until idleEnd,
	 * into ts. */
	static void idleStart(AtomicReferenceArray<Thread> ts) {
		try {
			Object b = Thread.class.getMethod("ofVirtual").invoke(null);
			Class<?> bc = Class.forName("java.lang.Thread$Builder");
			b = bc.getMethod("name", String.class, long.class).invoke(b, "vt-idle-", 0L);
			Method start = bc.getMethod("start", Runnable.class);
			long t0 = System.nanoTime();
			for (int i = 0; i < ts.length() && !idleEnd; i++) {
				while ((System.nanoTime() - t0) / 1000 * IDLE_PER_S / 1000000 < i)
					Thread.sleep(1);
				idleAlive.incrementAndGet();
				ts.set(i, (Thread) start.invoke(b, (Runnable) () -> {
					idleWait();
					idleAlive.decrementAndGet();
				}));
			}
		} catch (Exception e) {
			throw new RuntimeException(e);
		}
	}

	static void churnWait() {
		LockSupport.parkNanos(1000000);
	}

	/* About perS named virtual threads a second, at most 4096 alive at once. */
	static void churn(int perS) throws Exception {
		Object b = Thread.class.getMethod("ofVirtual").invoke(null);
		Class<?> bc = Class.forName("java.lang.Thread$Builder");
		b = bc.getMethod("name", String.class, long.class).invoke(b, "vt-worker-", 0L);
		Method start = bc.getMethod("start", Runnable.class);
		Semaphore alive = new Semaphore(4096);
		long t0 = System.nanoTime();
		for (;;) {
			long want = (System.nanoTime() - t0) / 1000 * perS / 1000000;
			while (churned.get() < want) {
				alive.acquire();
				start.invoke(b, (Runnable) () -> {
					churnWait();
					alive.release();
				});
				churned.incrementAndGet();
			}
			Thread.sleep(1);
		}
	}

	public static void main(String[] args) throws Exception {
		int threads = args.length > 0 ? Integer.parseInt(args[0]) : 8;
		long computeMs = args.length > 1 ? Long.parseLong(args[1]) : 2;
		long awaitMs = args.length > 2 ? Long.parseLong(args[2]) : 8;
		int churnPerS = args.length > 3 ? Integer.parseInt(args[3]) : 0;
		pinMs = args.length > 4 ? Long.parseLong(args[4]) : 0;
		int idle = args.length > 5 ? Integer.parseInt(args[5]) : 0;
		java.io.File go = args.length > 6 ? new java.io.File(args[6]) : null;
		AtomicReferenceArray<Thread> idlers = null;
		inHandler = new long[threads];
		inAwait = new long[threads];
		inCompute = new long[threads];
		Method m = Executors.class.getMethod("newVirtualThreadPerTaskExecutor");
		ExecutorService ex = (ExecutorService) m.invoke(null);
		for (int t = 0; t < threads; t++) {
			final int me = t;
			ex.submit(() -> {
				for (;;) {
					long t0 = System.nanoTime();
					inHandler[me] = t0;
					handle(me, computeMs, awaitMs);
					long t1 = System.nanoTime();
					inHandler[me] = 0;
					handlerNs.addAndGet(t1 - t0);
				}
			});
		}
		if (churnPerS > 0) {
			Thread c = new Thread(() -> {
				try {
					churn(churnPerS);
				} catch (Exception e) {
					throw new RuntimeException(e);
				}
			}, "churn");
			c.setDaemon(true);
			c.start();
		}
		if (pinMs > 0) {
			try (java.io.InputStream in = VThreadWall.class.getResourceAsStream(
				     PinInit.class.getName() + ".class")) {
				pinBytes = in.readAllBytes();
			}
			Object b = Thread.class.getMethod("ofVirtual").invoke(null);
			Class<?> bc = Class.forName("java.lang.Thread$Builder");
			b = bc.getMethod("name", String.class).invoke(b, "vt-pin-0");
			bc.getMethod("start", Runnable.class).invoke(b, (Runnable) VThreadWall::pinLoop);
		}
		System.out.println("VThreadWall ready");
		System.out.flush();
		for (;;) {
			Thread.sleep(100);
			if (idle > 0 && go != null) {
				if (idlers == null && go.exists()) {
					final AtomicReferenceArray<Thread> ts = idlers = new AtomicReferenceArray<>(idle);
					Thread st = new Thread(() -> idleStart(ts), "idle-starter");
					st.setDaemon(true);
					st.start();
				} else if (idlers != null && !idleEnd && !go.exists()) {
					idleEnd = true;
					for (int i = 0; i < idle; i++)
						if (idlers.get(i) != null)
							LockSupport.unpark(idlers.get(i));
				}
			}
			long now = System.nanoTime();
			System.out.println("vtw " + now / 1000 + " " + upTo(handlerNs, inHandler, now) + " "
					   + upTo(awaitNs, inAwait, now) + " "
					   + upTo(computeNs, inCompute, now)
					   + (churnPerS > 0 ? " vtc " + churned.get() : "")
					   + (pinMs > 0 ? " vtp " + upTo(pinnedNs, inPinned, now) : "")
					   + (pinMs > 0 || idle > 0
						      ? " vtu " + (upTo(awaitNs, inAwait, now)
								   + upTo(unpinnedNs, inUnpinned, now))
						      : "")
					   + (idle > 0 ? " vti " + idleAlive.get() : ""));
			System.out.flush();
		}
	}
}
