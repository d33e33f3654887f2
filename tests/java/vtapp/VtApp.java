// SPDX-License-Identifier: MIT
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;

/**
 * A web service on virtual threads from the JDK alone: com.sun.net.httpserver's HttpServer
 * whose executor starts a virtual thread per request (Executors.newVirtualThreadPerTaskExecutor,
 * JDK 21+; looked up by reflection, so the class files build with an older javac), answering GET
 * /q with JDBC queries against a real PostgreSQL or MariaDB server. The jar's manifest puts the
 * JDBC drivers' jars, copied beside it by the build, on the class path.
 *
 * <pre>
 *   java -cp fg-vtapp.jar VtApp pg|maria DBPORT [CUSTOMERS=5000]
 * </pre>
 *
 * Creates the tables customers and orders in the database "fg" (user "fg", no password; the
 * caller starts the server that way), fills them, listens on 127.0.0.1 on a free port and
 * prints "VtApp ready port=N" once requests are served.
 *
 * <p>A request (serve) is the work of RealAppServlet (tests/java/realapp) in two phases, each a
 * method of its own: queryDb (one statement prepared, executed, every row read) four times on a
 * pooled connection (a customer, its five largest orders, orders counted and summed by region
 * over 200 customers, the 400 largest orders of 41 customers), then render (the rows formatted
 * as text and JSON lines, about 30 KB, and written to the response). The virtual thread waits
 * for the database unmounted: the drivers read their sockets through the JDK's, which park a
 * virtual thread (or, inside synchronized on JDK 21, pin it to its carrier).
 *
 * <p>The service times its own work with System.nanoTime, from the entry to the return of
 * serve, queryDb and render, in cumulative counters that GET /truth prints as "truth NAME
 * VALUE" lines (requests, serve_ns, db_ns, render_ns) and the clock they are read at
 * (clock_ns): a profile's shares of serve's wall time, and its total, can be checked against
 * them.
 *
 * <p>It also keeps each call's entry and return times (System.nanoTime, CLOCK_MONOTONIC on
 * Linux) in a ring of the last RING calls. GET /truth?from=A&amp;to=B (nanoTime) adds the
 * lines "truth win_NAME_ns VALUE" for serve, db and render: the time of their calls inside
 * [A, B] (a call cut by an end counts its part inside), and "truth win_oldest_ns" (the entry
 * of the oldest call the ring still holds: the window is whole when it is at most A).
 */
public final class VtApp {
	static final int ORDERS_PER = 10;
	private static final String CUSTOMER = "SELECT name, region FROM customers WHERE id = ?";
	private static final String ORDERS =
		"SELECT id, amount FROM orders WHERE customer_id = ? ORDER BY amount DESC LIMIT 5";
	private static final String REGIONS =
		"SELECT c.region, COUNT(*), SUM(o.amount) FROM orders o JOIN customers c"
		+ " ON c.id = o.customer_id WHERE c.id BETWEEN ? AND ?"
		+ " GROUP BY c.region ORDER BY 3 DESC";
	private static final String LARGEST =
		"SELECT o.id, c.name, c.region, o.amount FROM orders o JOIN customers c"
		+ " ON c.id = o.customer_id WHERE c.id BETWEEN ? AND ?"
		+ " ORDER BY o.amount DESC, o.id LIMIT 400";

	private static String url;
	private static int customers;
	// Connections between requests: a virtual thread per request keeps none of its own.
	private static final ConcurrentLinkedQueue<Connection> POOL = new ConcurrentLinkedQueue<>();
	// The service's own account: requests answered, and nanoseconds in serve, queryDb, render.
	private static final LongAdder REQUESTS = new LongAdder();
	private static final LongAdder SERVE_NS = new LongAdder();
	private static final LongAdder DB_NS = new LongAdder();
	private static final LongAdder RENDER_NS = new LongAdder();
	// The last RING calls: kind (0 serve, 1 queryDb, 2 render), entry and return, nanoTime.
	static final int RING = 1 << 18;
	private static final AtomicLong CALLS = new AtomicLong();
	private static final AtomicLongArray KIND = new AtomicLongArray(RING);
	private static final AtomicLongArray ENTRY = new AtomicLongArray(RING);
	private static final AtomicLongArray EXIT = new AtomicLongArray(RING);

	/** A call of kind k from t0 to t1, into the ring. */
	static void keep(int k, long t0, long t1) {
		int i = (int) (CALLS.getAndIncrement() & (RING - 1));
		KIND.set(i, k);
		ENTRY.set(i, t0);
		EXIT.set(i, t1);
	}

	private VtApp() {
	}

	static String url(String db, int port) {
		if (db.equals("pg"))
			return "jdbc:postgresql://127.0.0.1:" + port + "/fg?user=fg";
		if (db.equals("maria"))
			return "jdbc:mariadb://127.0.0.1:" + port + "/fg?user=fg";
		throw new IllegalArgumentException("database must be pg or maria, not " + db);
	}

	/** The schema and its rows: ORDERS_PER orders for each customer, in 8 regions. */
	static void fill() throws SQLException {
		try (Connection c = DriverManager.getConnection(url)) {
			try (Statement s = c.createStatement()) {
				s.execute("DROP TABLE IF EXISTS orders");
				s.execute("DROP TABLE IF EXISTS customers");
				s.execute("CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL,"
					+ " region VARCHAR(16) NOT NULL)");
				s.execute("CREATE TABLE orders (id INT PRIMARY KEY, customer_id INT NOT NULL"
					+ " REFERENCES customers(id), amount DECIMAL(10,2) NOT NULL)");
				s.execute("CREATE INDEX orders_customer ON orders (customer_id)");
			}
			c.setAutoCommit(false);
			try (PreparedStatement p = c.prepareStatement("INSERT INTO customers VALUES (?, ?, ?)")) {
				for (int i = 1; i <= customers; i++) {
					p.setInt(1, i);
					p.setString(2, "customer-" + i);
					p.setString(3, "region-" + (i * 7 % 8));
					p.addBatch();
				}
				p.executeBatch();
			}
			try (PreparedStatement p = c.prepareStatement("INSERT INTO orders VALUES (?, ?, ?)")) {
				int id = 0;
				for (int i = 1; i <= customers; i++) {
					for (int k = 0; k < ORDERS_PER; k++) {
						id++;
						p.setInt(1, id);
						p.setInt(2, i);
						p.setBigDecimal(3, java.math.BigDecimal.valueOf((id * 7919L) % 100000, 2));
						p.addBatch();
					}
					if (i % 500 == 0)
						p.executeBatch();
				}
				p.executeBatch();
			}
			// The planner's statistics, committed (PostgreSQL's ANALYZE is transactional).
			try (Statement s = c.createStatement()) {
				s.execute(url.startsWith("jdbc:postgresql") ? "ANALYZE" : "ANALYZE TABLE customers, orders");
			}
			c.commit();
		}
	}

	/** GET /q: a request, answered 500 when the database fails it. */
	static void handle(HttpExchange ex) throws IOException {
		try {
			serve(ex);
		} catch (SQLException e) {
			ex.sendResponseHeaders(500, -1);
		} finally {
			ex.close();
		}
	}

	/** The request, timed: its queries on a pooled connection, then its rendering. */
	static void serve(HttpExchange ex) throws IOException, SQLException {
		long t0 = System.nanoTime();
		try {
			int id = ThreadLocalRandom.current().nextInt(1, customers + 1);
			List<Object[]> customer, orders, regions, largest;
			Connection c = POOL.poll();
			if (c == null)
				c = DriverManager.getConnection(url);
			try {
				customer = queryDb(c, CUSTOMER, id);
				orders = queryDb(c, ORDERS, id);
				regions = queryDb(c, REGIONS, Math.max(1, id - 100), id + 100);
				largest = queryDb(c, LARGEST, Math.max(1, id - 20), id + 20);
			} catch (SQLException e) {
				try {
					c.close();
				} catch (SQLException ignored) {
					// the connection is dropped either way
				}
				throw e;
			}
			POOL.offer(c);
			render(ex, customer, orders, regions, largest);
		} finally {
			long t1 = System.nanoTime();
			SERVE_NS.add(t1 - t0);
			REQUESTS.increment();
			keep(0, t0, t1);
		}
	}

	/** The database's part: one statement prepared, executed and its every row read. */
	static List<Object[]> queryDb(Connection c, String sql, int... args) throws SQLException {
		long t0 = System.nanoTime();
		try (PreparedStatement p = c.prepareStatement(sql)) {
			for (int i = 0; i < args.length; i++)
				p.setInt(i + 1, args[i]);
			List<Object[]> rows = new ArrayList<>();
			try (ResultSet r = p.executeQuery()) {
				int n = r.getMetaData().getColumnCount();
				while (r.next()) {
					Object[] row = new Object[n];
					for (int i = 0; i < n; i++)
						row[i] = r.getObject(i + 1);
					rows.add(row);
				}
			}
			return rows;
		} finally {
			long t1 = System.nanoTime();
			DB_NS.add(t1 - t0);
			keep(1, t0, t1);
		}
	}

	/** The service's own part: the rows as text and JSON lines, sent with their length. */
	static void render(HttpExchange ex, List<Object[]> customer, List<Object[]> orders,
		List<Object[]> regions, List<Object[]> largest) throws IOException {
		long t0 = System.nanoTime();
		try {
			ByteArrayOutputStream buf = new ByteArrayOutputStream(32768);
			PrintWriter out = new PrintWriter(new OutputStreamWriter(buf, StandardCharsets.UTF_8));
			for (Object[] r : customer)
				out.println(r[0] + " " + r[1]);
			for (Object[] r : orders)
				out.println("order " + r[0] + " " + r[1]);
			for (Object[] r : regions)
				out.println(r[0] + " " + r[1] + " " + r[2]);
			for (Object[] r : largest)
				out.println(String.format(Locale.ROOT,
					"{\"order\":%d,\"customer\":\"%s\",\"region\":\"%s\",\"amount\":%.2f}",
					r[0], r[1], r[2], r[3]));
			out.flush();
			ex.getResponseHeaders().set("Content-Type", "text/plain");
			ex.sendResponseHeaders(200, buf.size());
			try (OutputStream os = ex.getResponseBody()) {
				buf.writeTo(os);
			}
		} finally {
			long t1 = System.nanoTime();
			RENDER_NS.add(t1 - t0);
			keep(2, t0, t1);
		}
	}

	/** GET /truth: the counters, never under serve. */
	static void truth(HttpExchange ex) throws IOException {
		long now = System.nanoTime();
		String s = "truth requests " + REQUESTS.sum() + "\ntruth serve_ns " + SERVE_NS.sum()
			+ "\ntruth db_ns " + DB_NS.sum() + "\ntruth render_ns " + RENDER_NS.sum()
			+ "\ntruth clock_ns " + now + "\n" + window(ex.getRequestURI().getQuery());
		byte[] b = s.getBytes(StandardCharsets.UTF_8);
		ex.getResponseHeaders().set("Content-Type", "text/plain");
		ex.sendResponseHeaders(200, b.length);
		try (OutputStream os = ex.getResponseBody()) {
			os.write(b);
		}
	}

	/** The "truth win_*" lines of the query "from=A&to=B", or none. */
	static String window(String query) {
		long from = -1, to = -1;
		if (query == null)
			return "";
		for (String kv : query.split("&")) {
			if (kv.startsWith("from="))
				from = Long.parseLong(kv.substring(5));
			else if (kv.startsWith("to="))
				to = Long.parseLong(kv.substring(3));
		}
		if (from < 0 || to <= from)
			return "";
		long[] sum = new long[3];
		long n = CALLS.get(), oldest = Long.MAX_VALUE;
		for (long c = Math.max(0, n - RING); c < n; c++) {
			int i = (int) (c & (RING - 1));
			long t0 = ENTRY.get(i), t1 = EXIT.get(i);
			oldest = Math.min(oldest, t0);
			long a = Math.max(t0, from), b = Math.min(t1, to);
			if (b > a)
				sum[(int) KIND.get(i)] += b - a;
		}
		return "truth win_serve_ns " + sum[0] + "\ntruth win_db_ns " + sum[1]
			+ "\ntruth win_render_ns " + sum[2] + "\ntruth win_oldest_ns "
			+ (n > 0 ? oldest : 0) + "\ntruth win_ns " + (to - from) + "\n";
	}

	public static void main(String[] args) throws Exception {
		if (args.length < 2) {
			System.err.println("usage: VtApp pg|maria DBPORT [CUSTOMERS]");
			System.exit(64);
		}
		url = url(args[0], Integer.parseInt(args[1]));
		customers = args.length > 2 ? Integer.parseInt(args[2]) : 5000;
		fill();
		Executor vthreads = (Executor) Executors.class.getMethod("newVirtualThreadPerTaskExecutor")
			.invoke(null);
		HttpServer server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
		server.createContext("/q", VtApp::handle);
		server.createContext("/truth", VtApp::truth);
		server.setExecutor(vthreads);
		server.start();
		System.out.println("VtApp ready port=" + server.getAddress().getPort() + " db=" + args[0]
			+ " customers=" + customers);
		System.out.flush();
	}
}
