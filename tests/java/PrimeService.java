// SPDX-License-Identifier: MIT
/*
 * PrimeService - the classic slow prime-counting HTTP endpoint, JDK only, with its own load.
 *
 *   java PrimeService [--port P] [--bind ADDR] [--load THREADS] [--n N] [--seconds S]
 *                     [--impl trial|sieve]
 *                     [--report S]
 *
 *   GET /primes?n=N  ->  "primes below N: K"   (naive trial division: slow on purpose)
 *   GET /health      ->  "ok"
 *
 * --port 0 (default) picks a free port; the service prints "PrimeService listening on PORT".
 * --bind ADDR listens on ADDR (default: loopback only; 0.0.0.0 in a container image).
 * --load T starts T client threads hammering /primes?n=N on 127.0.0.1 (default 0).
 * --seconds S stops everything after S seconds (default 0: run until killed).
 * --impl picks how /primes counts (same answer): "trial" (default) divides each candidate by
 * every smaller number, O(N^2 / log N); "sieve" crosses out multiples in a boolean array,
 * O(N log log N). `make demo` compares the two.
 * --report S prints "PrimeService served COUNT at MS" every S seconds (MS since the start), for
 * throughput over a window.
 */
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

public final class PrimeService {
	static final AtomicLong served = new AtomicLong();

	static boolean isPrime(int n)
	{
		if (n < 2)
			return false;
		for (int i = 2; i < n; i++) {
			if (n % i == 0)
				return false;
		}
		return true;
	}

	static int countPrimes(int below)
	{
		int count = 0;
		for (int i = 2; i < below; i++) {
			if (isPrime(i))
				count++;
		}
		return count;
	}

	static int countPrimesSieve(int below)
	{
		if (below < 3)
			return 0;
		boolean[] composite = new boolean[below];
		int count = 0;
		for (int i = 2; i < below; i++) {
			if (composite[i])
				continue;
			count++;
			for (long j = (long)i * i; j < below; j += i)
				composite[(int)j] = true;
		}
		return count;
	}

	static boolean sieve;

	static int param(String query, String key, int dflt)
	{
		if (query == null)
			return dflt;
		for (String kv : query.split("&")) {
			int eq = kv.indexOf('=');
			if (eq > 0 && kv.substring(0, eq).equals(key)) {
				try {
					return Integer.parseInt(kv.substring(eq + 1));
				} catch (NumberFormatException e) {
					return dflt;
				}
			}
		}
		return dflt;
	}

	static void reply(HttpExchange ex, int code, String body) throws IOException
	{
		byte[] b = body.getBytes(StandardCharsets.UTF_8);
		ex.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
		ex.sendResponseHeaders(code, b.length);
		try (OutputStream os = ex.getResponseBody()) {
			os.write(b);
		}
	}

	static void primes(HttpExchange ex) throws IOException
	{
		int n = param(ex.getRequestURI().getRawQuery(), "n", 10_000);
		if (n < 0 || n > 1_000_000) {
			reply(ex, 400, "n must be in [0, 1000000]\n");
			return;
		}
		int k = sieve ? countPrimesSieve(n) : countPrimes(n);
		served.incrementAndGet();
		reply(ex, 200, "primes below " + n + ": " + k + "\n");
	}

	static void load(int port, int n, long deadline)
	{
		byte[] buf = new byte[4096];
		while (System.nanoTime() < deadline && !Thread.currentThread().isInterrupted()) {
			try {
				URL url = new URL("http://127.0.0.1:" + port + "/primes?n=" + n);
				HttpURLConnection c = (HttpURLConnection)url.openConnection();
				c.setConnectTimeout(2000);
				c.setReadTimeout(10000);
				try (InputStream in = c.getInputStream()) {
					while (in.read(buf) > 0)
						;
				}
			} catch (IOException e) {
				try {
					Thread.sleep(50);
				} catch (InterruptedException ie) {
					return;
				}
			}
		}
	}

	public static void main(String[] args) throws Exception
	{
		int port = 0, threads = 0, n = 20_000;
		InetAddress bind = InetAddress.getLoopbackAddress();
		long seconds = 0, report = 0;
		for (int i = 0; i + 1 < args.length; i += 2) {
			switch (args[i]) {
			case "--port": port = Integer.parseInt(args[i + 1]); break;
			case "--bind": bind = InetAddress.getByName(args[i + 1]); break;
			case "--load": threads = Integer.parseInt(args[i + 1]); break;
			case "--n": n = Integer.parseInt(args[i + 1]); break;
			case "--seconds": seconds = Long.parseLong(args[i + 1]); break;
			case "--impl":
				if (!args[i + 1].equals("trial") && !args[i + 1].equals("sieve"))
					throw new IllegalArgumentException("--impl must be trial or sieve");
				sieve = args[i + 1].equals("sieve");
				break;
			case "--report": report = Long.parseLong(args[i + 1]); break;
			default: throw new IllegalArgumentException("unknown option " + args[i]);
			}
		}
		// Without it, a small response waits for the client's delayed ACK (Nagle): ~40 ms per
		// request on loopback, and a fast endpoint would be idle rather than busy.
		System.setProperty("sun.net.httpserver.nodelay", "true");
		HttpServer server = HttpServer.create(new InetSocketAddress(bind, port), 64);
		server.createContext("/primes", ex -> primes(ex));
		server.createContext("/health", ex -> reply(ex, 200, "ok\n"));
		server.setExecutor(Executors.newFixedThreadPool(2));
		server.start();
		int bound = server.getAddress().getPort();
		System.out.println("PrimeService listening on " + bound);
		System.out.flush();

		long deadline = seconds > 0 ? System.nanoTime() + seconds * 1_000_000_000L : Long.MAX_VALUE;
		final int fn = n;
		for (int t = 0; t < threads; t++) {
			Thread th = new Thread(() -> load(bound, fn, deadline), "load-" + t);
			th.setDaemon(true);
			th.start();
		}
		long start = System.nanoTime(), next = start + report * 1_000_000_000L;
		if (seconds > 0) {
			while (System.nanoTime() < deadline) {
				Thread.sleep(100);
				if (report > 0 && System.nanoTime() >= next) {
					System.out.println("PrimeService served " + served.get() + " at "
							   + (System.nanoTime() - start) / 1_000_000);
					System.out.flush();
					next += report * 1_000_000_000L;
				}
			}
			server.stop(0);
			System.out.println("PrimeService served " + served.get());
			System.exit(0);
		}
	}
}
