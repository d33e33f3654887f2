// SPDX-License-Identifier: MIT
/*
 * LockTruth - a monitor held a known share of the time, threads that time their own waits for
 * it, and a java.util.concurrent lock beside it, for lock (and off-CPU) profiles.
 *
 *   java LockTruth SECONDS DIR
 *
 * Threads (by name):
 *   fg-holder     holdLedger(): holds the monitor of LEDGER (a LockTruth$Ledger) for 40 ms
 *                 (sleeping inside it), lets go for 10 ms: held 80% of the time;
 *   fg-waiter1,   enterLedger(): enter LEDGER's monitor, leave at once, sleep 2 ms (fg-waiter1)
 *   fg-waiter2    or 5 ms (fg-waiter2), again: blocked on the monitor most of the time; each
 *                 times every entry with System.nanoTime (from before the synchronized block to
 *                 inside it);
 *   fg-rl-holder  holdReentrant(): holds a java.util.concurrent.locks.ReentrantLock 40 ms, lets
 *                 go 10 ms;
 *   fg-rl-waiter  enterReentrant(): lock() and unlock() it, sleep 2 ms, again, timed the same
 *                 way: it parks, which JVMTI's monitor events do not see (off-CPU does).
 * They run only during bursts (Burst: a test writes "N MS" to DIR/burst), after a 2 s warm-up
 * burst of their own; for each the main thread prints the waits the threads timed in it:
 *   lock-burst N start
 *   lock-burst N fg-waiter1 NS fg-waiter2 NS fg-rl-waiter NS entries E end
 * (entries: the waiters' monitor entries). Between bursts, every 100 ms, the same since the
 * start, stamped with System.nanoTime:
 *   lock-truth NANOTIME fg-waiter1 NS fg-waiter2 NS fg-rl-waiter NS entries E end
 * Prints "LockTruth ready" after the warm-up.
 */
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

public final class LockTruth {
	static final class Ledger {
		long entries;
	}

	static final Ledger LEDGER = new Ledger();
	static final ReentrantLock RL = new ReentrantLock();
	static final AtomicLong w1Ns = new AtomicLong(), w2Ns = new AtomicLong(), rlNs = new AtomicLong();
	static final AtomicLong entries = new AtomicLong();
	static Burst burst;

	static void holdLedger() throws InterruptedException
	{
		synchronized (LEDGER) {
			Thread.sleep(40);
		}
	}

	static void holder()
	{
		try {
			for (int g = 0;;) {
				g = burst.awaitStart(g);
				while (burst.active()) {
					holdLedger();
					Thread.sleep(10);
				}
				burst.done();
			}
		} catch (InterruptedException e) {
		}
	}

	static void enterLedger()
	{
		synchronized (LEDGER) {
			LEDGER.entries++;
		}
	}

	static void waiter(AtomicLong ns, int pauseMs)
	{
		try {
			for (int g = 0;;) {
				g = burst.awaitStart(g);
				while (burst.active()) {
					long t0 = System.nanoTime();
					enterLedger();
					ns.addAndGet(System.nanoTime() - t0);
					entries.incrementAndGet();
					Thread.sleep(pauseMs);
				}
				burst.done();
			}
		} catch (InterruptedException e) {
		}
	}

	static void holdReentrant() throws InterruptedException
	{
		RL.lock();
		try {
			Thread.sleep(40);
		} finally {
			RL.unlock();
		}
	}

	static void rlHolder()
	{
		try {
			for (int g = 0;;) {
				g = burst.awaitStart(g);
				while (burst.active()) {
					holdReentrant();
					Thread.sleep(10);
				}
				burst.done();
			}
		} catch (InterruptedException e) {
		}
	}

	static void enterReentrant()
	{
		RL.lock();
		RL.unlock();
	}

	static void rlWaiter()
	{
		try {
			for (int g = 0;;) {
				g = burst.awaitStart(g);
				while (burst.active()) {
					long t0 = System.nanoTime();
					enterReentrant();
					rlNs.addAndGet(System.nanoTime() - t0);
					Thread.sleep(2);
				}
				burst.done();
			}
		} catch (InterruptedException e) {
		}
	}

	static Thread start(String name, Runnable r)
	{
		Thread t = new Thread(r, name);

		t.setDaemon(true);
		t.start();
		return t;
	}

	static long[] counts()
	{
		return new long[] { w1Ns.get(), w2Ns.get(), rlNs.get(), entries.get() };
	}

	static String line(long[] c)
	{
		return " fg-waiter1 " + c[0] + " fg-waiter2 " + c[1] + " fg-rl-waiter " + c[2] + " entries " +
		       c[3] + " end";
	}

	public static void main(String[] args) throws Exception
	{
		long seconds = Long.parseLong(args[0]);

		burst = new Burst(args[1], 5);
		start("fg-holder", LockTruth::holder);
		start("fg-waiter1", () -> waiter(w1Ns, 2));
		start("fg-waiter2", () -> waiter(w2Ns, 5));
		start("fg-rl-holder", LockTruth::rlHolder);
		start("fg-rl-waiter", LockTruth::rlWaiter);
		burst.run(2000); /* compiled by now */
		System.out.println("LockTruth ready");
		System.out.flush();
		long end = System.nanoTime() + seconds * 1_000_000_000L, next = 0;
		while (System.nanoTime() < end) {
			Thread.sleep(10);
			long ms = burst.poll();
			if (ms > 0) {
				System.out.println("lock-burst " + burst.asked() + " start");
				System.out.flush();
				long[] c0 = counts();
				burst.run(ms);
				long[] c1 = counts();
				for (int i = 0; i < c1.length; i++)
					c1[i] -= c0[i];
				System.out.println("lock-burst " + burst.asked() + line(c1));
				System.out.flush();
			}
			long now = System.nanoTime();
			if (now >= next) {
				next = now + 100_000_000L;
				System.out.println("lock-truth " + now + line(counts()));
				System.out.flush();
			}
		}
	}
}
