// SPDX-License-Identifier: MIT
/*
 * OffCpuTruth - threads whose time off the CPU is known, for off-CPU and wall-clock profiles.
 *
 *   java OffCpuTruth SECONDS [DISK_DIR]
 *
 * Threads (by name):
 *   fg-sleeper    loops computeA() (spins for 20 ms of wall time), then sleepB()
 *                 (Thread.sleep(60));
 *   fg-holder     holds the monitor LOCK for 150 ms (sleeping inside it), lets go for 2 ms;
 *   fg-contender  contend(): enters LOCK, leaves at once, again: blocked on the monitor;
 *   fg-reader     readReply(): sends a byte to a local server and blocks reading its answer,
 *                 which the server thread (fg-server) sends 40 ms later;
 *   fg-syncer     syncDisk(): writes 256 KiB to DISK_DIR/sync.dat and fsyncs it (only with
 *                 DISK_DIR).
 * Each measures with System.nanoTime the time spent in its methods and prints, every 100 ms,
 * "truth NAME METHOD MS" cumulative since its start and "truth clock now MS", so that a test can compare the profile of
 * a window against these shares. Prints "OffCpuTruth ready" once every thread is running.
 */
import java.io.File;
import java.io.FileOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.atomic.AtomicLong;

public final class OffCpuTruth {
	static final Object LOCK = new Object();
	static volatile long sink;
	static final AtomicLong aNs = new AtomicLong(), bNs = new AtomicLong();
	static final AtomicLong contendNs = new AtomicLong(), readNs = new AtomicLong();
	static final AtomicLong syncNs = new AtomicLong(), syncs = new AtomicLong();

	static void computeA()
	{
		long end = System.nanoTime() + 20_000_000L;
		long x = sink;

		while (System.nanoTime() < end)
			for (int i = 0; i < 1000; i++)
				x = x * 6364136223846793005L + i;
		sink = x;
	}

	static void sleepB() throws InterruptedException
	{
		Thread.sleep(60);
	}

	static void sleeper()
	{
		try {
			for (;;) {
				long t0 = System.nanoTime();
				computeA();
				long t1 = System.nanoTime();
				sleepB();
				long t2 = System.nanoTime();
				aNs.addAndGet(t1 - t0);
				bNs.addAndGet(t2 - t1);
			}
		} catch (InterruptedException e) {
		}
	}

	static void holder()
	{
		try {
			for (;;) {
				synchronized (LOCK) {
					Thread.sleep(150);
				}
				Thread.sleep(2);
			}
		} catch (InterruptedException e) {
		}
	}

	static void contend()
	{
		synchronized (LOCK) {
			sink++;
		}
	}

	static void contender()
	{
		for (;;) {
			long t0 = System.nanoTime();
			contend();
			contendNs.addAndGet(System.nanoTime() - t0);
		}
	}

	static int readReply(InputStream in) throws Exception
	{
		return in.read();
	}

	static void reader(int port)
	{
		try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
			s.setTcpNoDelay(true);
			InputStream in = s.getInputStream();
			OutputStream out = s.getOutputStream();
			for (;;) {
				out.write(1);
				out.flush();
				long t0 = System.nanoTime();
				if (readReply(in) < 0)
					return;
				readNs.addAndGet(System.nanoTime() - t0);
			}
		} catch (Exception e) {
			e.printStackTrace();
		}
	}

	static void server(ServerSocket ss)
	{
		try (Socket s = ss.accept()) {
			s.setTcpNoDelay(true);
			InputStream in = s.getInputStream();
			OutputStream out = s.getOutputStream();
			while (in.read() >= 0) {
				Thread.sleep(40);
				out.write(2);
				out.flush();
			}
		} catch (Exception e) {
			e.printStackTrace();
		}
	}

	static void syncDisk(FileOutputStream f, byte[] buf) throws Exception
	{
		f.write(buf);
		f.getFD().sync();
	}

	static void syncer(String dir)
	{
		byte[] buf = new byte[256 * 1024];

		for (int i = 0; i < buf.length; i++)
			buf[i] = (byte)i;
		try {
			File file = new File(dir, "sync.dat");
			for (;;) {
				try (FileOutputStream f = new FileOutputStream(file)) {
					long t0 = System.nanoTime();
					syncDisk(f, buf);
					syncNs.addAndGet(System.nanoTime() - t0);
					syncs.incrementAndGet();
				}
				Thread.sleep(5);
			}
		} catch (Exception e) {
			e.printStackTrace();
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
		ServerSocket ss = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());

		start("fg-server", () -> server(ss));
		start("fg-sleeper", OffCpuTruth::sleeper);
		start("fg-holder", OffCpuTruth::holder);
		start("fg-contender", OffCpuTruth::contender);
		start("fg-reader", () -> reader(ss.getLocalPort()));
		if (args.length > 1)
			start("fg-syncer", () -> syncer(args[1]));
		Thread.sleep(2000); /* compiled by now: computeA runs hot */
		System.out.println("OffCpuTruth ready");
		long t0 = System.nanoTime(), end = t0 + seconds * 1_000_000_000L;
		while (System.nanoTime() < end) {
			Thread.sleep(100);
			System.out.printf("truth clock now %d%n", (System.nanoTime() - t0) / 1_000_000);
			System.out.printf("truth fg-sleeper computeA %d%n", aNs.get() / 1_000_000);
			System.out.printf("truth fg-sleeper sleepB %d%n", bNs.get() / 1_000_000);
			System.out.printf("truth fg-contender contend %d%n", contendNs.get() / 1_000_000);
			System.out.printf("truth fg-reader readReply %d%n", readNs.get() / 1_000_000);
			System.out.printf("truth fg-syncer syncDisk %d %d%n", syncNs.get() / 1_000_000,
					  syncs.get());
			System.out.flush();
		}
	}
}
