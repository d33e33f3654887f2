// SPDX-License-Identifier: MIT
import java.io.IOException;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.LongAdder;
import javax.servlet.ServletException;
import javax.servlet.http.HttpServlet;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;

/**
 * The service's one endpoint: a customer's record, its five largest orders, over a range of
 * 200 customers around it the orders counted and summed by region (a join and an aggregate,
 * so the database does real work), and the 400 largest of the orders of 41 customers around it
 * as JSON lines (about 30 KB: the service does work of its own). A JDBC connection per worker
 * thread, opened on its first request and kept.
 *
 * <p>A request is two phases in two methods, so that each is a frame of its own: queryDb (one
 * statement: prepared, executed, every row read) four times, then render (the rows formatted
 * and written to the response). The servlet times its own work with System.nanoTime, from the
 * entry to the return of doGet, queryDb and render, in cumulative counters that {@link Truth}
 * prints (GET /truth): a profile's shares of doGet's wall time can be checked against them;
 * and doGet's CPU time (the thread's CPU clock), so that its time off the CPU can be too.
 */
public final class RealAppServlet extends HttpServlet {
	static final int ORDERS_PER = 10;
	private static final long serialVersionUID = 1L;
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
	private final String url;
	private final int customers;
	private final transient ThreadLocal<Connection> conn = new ThreadLocal<>();
	// The service's own account: requests answered, and nanoseconds in doGet, queryDb, render.
	private final transient LongAdder requests = new LongAdder();
	private final transient LongAdder doGetNs = new LongAdder();
	private final transient LongAdder dbNs = new LongAdder();
	private final transient LongAdder renderNs = new LongAdder();
	private final transient LongAdder doGetCpuNs = new LongAdder();
	private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

	RealAppServlet(String url, int customers) {
		this.url = url;
		this.customers = customers;
	}

	private Connection connection() throws SQLException {
		Connection c = conn.get();
		if (c == null) {
			c = DriverManager.getConnection(url);
			conn.set(c);
		}
		return c;
	}

	@Override
	protected void doGet(HttpServletRequest req, HttpServletResponse resp)
		throws ServletException, IOException {
		long t0 = System.nanoTime(), c0 = THREADS.getCurrentThreadCpuTime();
		try {
			String q = req.getParameter("id");
			int id = q != null ? Integer.parseInt(q) : ThreadLocalRandom.current().nextInt(1, customers + 1);
			List<Object[]> customer, orders, regions, largest;
			try {
				Connection c = connection();
				customer = queryDb(c, CUSTOMER, id);
				orders = queryDb(c, ORDERS, id);
				regions = queryDb(c, REGIONS, Math.max(1, id - 100), id + 100);
				largest = queryDb(c, LARGEST, Math.max(1, id - 20), id + 20);
			} catch (SQLException e) {
				Connection c = conn.get();
				conn.remove();
				if (c != null) {
					try {
						c.close();
					} catch (SQLException ignored) {
						// the connection is dropped either way
					}
				}
				throw new ServletException(e);
			}
			render(resp, customer, orders, regions, largest);
		} finally {
			doGetCpuNs.add(THREADS.getCurrentThreadCpuTime() - c0);
			doGetNs.add(System.nanoTime() - t0);
			requests.increment();
		}
	}

	/** The database's part: one statement prepared, executed and its every row read. */
	private List<Object[]> queryDb(Connection c, String sql, int... args) throws SQLException {
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
			dbNs.add(System.nanoTime() - t0);
		}
	}

	/** The service's own part: the rows as text lines, the largest orders as JSON lines. */
	private void render(HttpServletResponse resp, List<Object[]> customer, List<Object[]> orders,
		List<Object[]> regions, List<Object[]> largest) throws IOException {
		long t0 = System.nanoTime();
		try {
			resp.setContentType("text/plain");
			PrintWriter out = resp.getWriter();
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
		} finally {
			renderNs.add(System.nanoTime() - t0);
		}
	}

	/**
	 * GET /truth: the servlet's counters, one "truth NAME VALUE" line each (requests,
	 * doget_ns, db_ns, render_ns, doget_cpu_ns) and the clock they are read at (clock_ns,
	 * System.nanoTime).
	 * A servlet of its own, so that reading them is never under RealAppServlet::doGet.
	 */
	static final class Truth extends HttpServlet {
		private static final long serialVersionUID = 1L;
		private final transient RealAppServlet app;

		Truth(RealAppServlet app) {
			this.app = app;
		}

		@Override
		protected void doGet(HttpServletRequest req, HttpServletResponse resp) throws IOException {
			long now = System.nanoTime();
			resp.setContentType("text/plain");
			PrintWriter out = resp.getWriter();
			out.println("truth requests " + app.requests.sum());
			out.println("truth doget_ns " + app.doGetNs.sum());
			out.println("truth db_ns " + app.dbNs.sum());
			out.println("truth render_ns " + app.renderNs.sum());
			out.println("truth doget_cpu_ns " + app.doGetCpuNs.sum());
			out.println("truth clock_ns " + now);
		}
	}
}
