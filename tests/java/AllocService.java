// SPDX-License-Identifier: MIT
/*
 * AllocService - a service-like load that allocates fast: worker threads answer synthetic
 * requests at a fixed rate, each request parsing a query into a map, building a list of records,
 * reading its body into a 32 KiB buffer, rendering the list as JSON into a byte[] and copying
 * it into a response buffer (about 105 KB of strings, maps, records and arrays per request), for the cost of allocation profiling.
 *
 *   java AllocService SECONDS RATE [WORKERS=4]
 *
 * RATE requests per second in all, shared by WORKERS threads named fg-svc-N (paced; a worker
 * that falls behind does not catch up more than 50 ms). Every 100 ms the main thread prints
 *   svc-truth NANOTIME requests N bytes B end
 * with N the requests answered and B the bytes the workers allocated since the start (the JVM's
 * own count, ThreadMXBean.getThreadAllocatedBytes), stamped with System.nanoTime
 * (CLOCK_MONOTONIC on Linux). Prints "AllocService ready" after a 3 s warm-up.
 */
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

public final class AllocService {
	static final class Item {
		final long id;
		final String name;
		final double price;
		final List<String> tags;

		Item(long id, String name, double price, List<String> tags)
		{
			this.id = id;
			this.name = name;
			this.price = price;
			this.tags = tags;
		}
	}

	static final AtomicLong requests = new AtomicLong();
	static volatile long sink;

	static Map<String, String> parseQuery(String req)
	{
		Map<String, String> m = new HashMap<>();
		int q = req.indexOf('?'), sp = req.lastIndexOf(' ');
		for (String kv : req.substring(q + 1, sp).split("&")) {
			int eq = kv.indexOf('=');
			m.put(kv.substring(0, eq), kv.substring(eq + 1));
		}
		return m;
	}

	static List<Item> loadItems(long user, int page, int size)
	{
		List<Item> items = new ArrayList<>();
		for (int i = 0; i < size; i++) {
			long id = user * 1000 + page * size + i;
			List<String> tags = new ArrayList<>();
			tags.add("cat-" + (id % 17));
			tags.add("brand-" + (id % 29));
			items.add(new Item(id, "item number " + id, (id % 1000) / 10.0, tags));
		}
		return items;
	}

	static byte[] render(List<Item> items)
	{
		StringBuilder sb = new StringBuilder();
		sb.append("{\"items\":[");
		for (Item it : items) {
			sb.append("{\"id\":").append(it.id).append(",\"name\":\"").append(it.name)
				.append("\",\"price\":").append(it.price).append(",\"tags\":[");
			for (String t : it.tags)
				sb.append('"').append(t).append("\",");
			sb.append("]},");
		}
		sb.append("]}");
		return sb.toString().getBytes(StandardCharsets.UTF_8);
	}

	static long respond(byte[] body)
	{
		byte[] out = new byte[body.length + 256];
		System.arraycopy(body, 0, out, 256, body.length);
		long h = 0;
		for (int i = 0; i < out.length; i += 64)
			h = h * 31 + out[i];
		return h;
	}

	/* The request's body as a server reads it: into a fresh 32 KiB buffer. */
	static byte[] readBody(long n)
	{
		byte[] in = new byte[32768];
		for (int i = 0; i < in.length; i += 512)
			in[i] = (byte)(n + i);
		return in;
	}

	static long handle(long n)
	{
		String req = "GET /items?user=" + (n % 9973) + "&page=" + (n % 7) + "&size=96 HTTP/1.1";
		long h = readBody(n)[512];
		Map<String, String> q = parseQuery(req);
		List<Item> items = loadItems(Long.parseLong(q.get("user")), Integer.parseInt(q.get("page")),
					     Integer.parseInt(q.get("size")));
		return h + respond(render(items));
	}

	static void worker(double rate)
	{
		long t0 = System.nanoTime(), done = 0, h = 0;

		try {
			for (;;) {
				double due = rate * (System.nanoTime() - t0) / 1e9;
				if (done < due - rate / 20)
					done = (long)(due - rate / 20);
				if (done >= due) {
					Thread.sleep(1);
					continue;
				}
				h += handle(done++);
				requests.incrementAndGet();
			}
		} catch (InterruptedException e) {
		}
		sink = h;
	}

	public static void main(String[] args) throws Exception
	{
		long seconds = Long.parseLong(args[0]);
		double rate = Double.parseDouble(args[1]);
		int workers = args.length > 2 ? Integer.parseInt(args[2]) : 4;
		com.sun.management.ThreadMXBean mx =
			(com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
		mx.setThreadAllocatedMemoryEnabled(true);
		long[] ids = new long[workers];
		for (int i = 0; i < workers; i++) {
			Thread t = new Thread(() -> worker(rate / workers), "fg-svc-" + i);
			t.setDaemon(true);
			t.start();
			ids[i] = t.getId();
		}
		Thread.sleep(3000);
		System.out.println("AllocService ready");
		long end = System.nanoTime() + seconds * 1_000_000_000L;
		while (System.nanoTime() < end) {
			Thread.sleep(100);
			long now = System.nanoTime();
			long b = 0;
			for (long x : mx.getThreadAllocatedBytes(ids))
				b += x;
			System.out.println("svc-truth " + now + " requests " + requests.get() + " bytes " + b + " end");
			System.out.flush();
		}
	}
}
