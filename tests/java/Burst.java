// SPDX-License-Identifier: MIT
/*
 * Burst - the known-answer workloads' (AllocTruth, LeakTruth, LockTruth) bursts of work: their
 * threads work only while a burst lasts, so that a test that starts a burst inside a recording's
 * window compares the profile with the workload's own count of exactly that burst, whenever the
 * recording's events turned on and whatever the machine's load.
 *
 * A test asks for burst N of MS milliseconds by writing "N MS" to the file DIR/burst (a new N
 * each time: write another file and rename it there). The main thread (poll) sees it within
 * 10 ms, takes its counters (before), runs the burst and waits until every worker has stopped
 * (each calls done() after its last unit of work), then takes them again (after).
 *
 * Workers:  for (int g = 0;;) { g = b.awaitStart(g); while (b.active()) work(); b.done(); }
 */
import java.io.File;
import java.nio.file.Files;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

final class Burst {
	private final File file;
	private final int workers;
	private volatile long until; /* System.nanoTime at which the current burst ends */
	private volatile int gen;    /* the current burst's number (0: none yet) */
	private final AtomicInteger acks = new AtomicInteger();
	private int asked;	     /* the last N read from the file */

	Burst(String dir, int workers)
	{
		this.file = dir == null ? null : new File(dir, "burst");
		this.workers = workers;
	}

	/* Worker: sleep until a burst after gen starts; its number. Parks (Thread.sleep allocates a
	 * little on some JDKs: an idle worker allocates nothing). */
	int awaitStart(int gen) throws InterruptedException
	{
		while (this.gen == gen) {
			LockSupport.parkNanos(1_000_000L);
			if (Thread.interrupted())
				throw new InterruptedException();
		}
		return this.gen;
	}

	boolean active()
	{
		return System.nanoTime() < until;
	}

	/* Worker: stopped after the current burst. */
	void done()
	{
		acks.incrementAndGet();
	}

	/* Main: run a burst of ms (every worker starts, works ms, stops); returns once all stopped. */
	void run(long ms) throws InterruptedException
	{
		int want = acks.get() + workers;

		until = System.nanoTime() + ms * 1_000_000L;
		gen++;
		while (acks.get() < want)
			Thread.sleep(1);
	}

	/* Main: the milliseconds of a newly asked burst (its number in asked()), or 0. */
	long poll()
	{
		if (file == null || !file.isFile())
			return 0;
		try {
			String[] w = new String(Files.readAllBytes(file.toPath())).trim().split(" ");
			int n = Integer.parseInt(w[0]);
			if (n == asked)
				return 0;
			asked = n;
			return Long.parseLong(w[1]);
		} catch (Exception e) {
			return 0; /* half written: next time */
		}
	}

	int asked()
	{
		return asked;
	}
}
