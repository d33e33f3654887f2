// SPDX-License-Identifier: MIT
/*
 * LockTruth - a monitor held a known share of the time, threads that time their own waits for
 * it, and a java.util.concurrent lock beside it, for lock (and off-CPU) profiles.
 *
 *   java LockTruth SECONDS
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
 * Every 100 ms the main thread prints one line of cumulative waits since the start, stamped with
 * System.nanoTime (CLOCK_MONOTONIC on Linux, the clock of the profiles' events):
 *   lock-truth NANOTIME fg-waiter1 NS fg-waiter2 NS fg-rl-waiter NS entries N end
 * (entries: the waiters' monitor entries; "end" closes a complete line). Prints "LockTruth ready"
 * once every thread ran 2 s (compiled).
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

	static void holdLedger() throws InterruptedException
	{
		synchronized (LEDGER) {
			Thread.sleep(40);
		}
	}

	static void holder()
	{
		try {
			for (;;) {
				holdLedger();
				Thread.sleep(10);
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
			for (;;) {
				long t0 = System.nanoTime();
				enterLedger();
				ns.addAndGet(System.nanoTime() - t0);
				Thread.sleep(pauseMs);
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
			for (;;) {
				holdReentrant();
				Thread.sleep(10);
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
			for (;;) {
				long t0 = System.nanoTime();
				enterReentrant();
				rlNs.addAndGet(System.nanoTime() - t0);
				Thread.sleep(2);
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

	public static void main(String[] args) throws Exception
	{
		long seconds = Long.parseLong(args[0]);

		start("fg-holder", LockTruth::holder);
		start("fg-waiter1", () -> waiter(w1Ns, 2));
		start("fg-waiter2", () -> waiter(w2Ns, 5));
		start("fg-rl-holder", LockTruth::rlHolder);
		start("fg-rl-waiter", LockTruth::rlWaiter);
		Thread.sleep(2000);
		System.out.println("LockTruth ready");
		long end = System.nanoTime() + seconds * 1_000_000_000L;
		while (System.nanoTime() < end) {
			Thread.sleep(100);
			long entries = LEDGER.entries; /* racy: a count for the log only */
			System.out.printf("lock-truth %d fg-waiter1 %d fg-waiter2 %d fg-rl-waiter %d entries %d end%n",
					  System.nanoTime(), w1Ns.get(), w2Ns.get(), rlNs.get(), entries);
			System.out.flush();
		}
	}
}
