// SPDX-License-Identifier: MIT
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.servlet.ServletContextHandler;
import org.eclipse.jetty.servlet.ServletHolder;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * A small web service built from stock parts: embedded Jetty 9 serving one servlet
 * (RealAppServlet at /q) that answers every request with a few JDBC queries against a real
 * PostgreSQL or MariaDB server. The jar's manifest puts Debian's Jetty, servlet API and JDBC
 * driver jars (/usr/share/java) on the class path.
 *
 * <pre>
 *   java -jar fg-realapp.jar RealApp pg|maria DBPORT [THREADS=4] [CUSTOMERS=5000]
 * </pre>
 *
 * Creates the tables customers and orders in the database "fg" (user "fg", no password; the
 * caller starts the server that way), fills them, listens on 127.0.0.1 on a free port and
 * prints "RealApp ready port=N" once requests are served. GET /truth prints the servlet's own
 * timing of its requests (RealAppServlet.Truth).
 */
public final class RealApp {
	private RealApp() {
	}

	static String url(String db, int port) {
		if (db.equals("pg"))
			return "jdbc:postgresql://127.0.0.1:" + port + "/fg?user=fg";
		if (db.equals("maria"))
			return "jdbc:mariadb://127.0.0.1:" + port + "/fg?user=fg";
		throw new IllegalArgumentException("database must be pg or maria, not " + db);
	}

	/** The schema and its rows: ORDERS_PER orders for each customer, in 8 regions. */
	static void fill(String url, int customers) throws SQLException {
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
					for (int k = 0; k < RealAppServlet.ORDERS_PER; k++) {
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
			// The planner's statistics, committed: PostgreSQL's ANALYZE is transactional (rolled
			// back at the close, it left the planner guessing: all the orders scanned where
			// their index serves).
			try (Statement s = c.createStatement()) {
				s.execute(url.startsWith("jdbc:postgresql") ? "ANALYZE" : "ANALYZE TABLE customers, orders");
			}
			c.commit();
		}
	}

	public static void main(String[] args) throws Exception {
		if (args.length < 2) {
			System.err.println("usage: RealApp pg|maria DBPORT [THREADS] [CUSTOMERS]");
			System.exit(64);
		}
		String url = url(args[0], Integer.parseInt(args[1]));
		int threads = args.length > 2 ? Integer.parseInt(args[2]) : 4;
		int customers = args.length > 3 ? Integer.parseInt(args[3]) : 5000;
		fill(url, customers);

		// Jetty's pool needs a thread for the acceptor and one for the selector besides the
		// request workers.
		QueuedThreadPool pool = new QueuedThreadPool(threads + 2, threads + 2);
		pool.setName("rq");
		Server server = new Server(pool);
		ServerConnector conn = new ServerConnector(server, 1, 1);
		conn.setHost("127.0.0.1");
		conn.setPort(0);
		server.addConnector(conn);
		ServletContextHandler ctx = new ServletContextHandler();
		ctx.setContextPath("/");
		RealAppServlet app = new RealAppServlet(url, customers);
		ctx.addServlet(new ServletHolder(app), "/q");
		ctx.addServlet(new ServletHolder(new RealAppServlet.Truth(app)), "/truth");
		server.setHandler(ctx);
		server.start();
		System.out.println("RealApp ready port=" + conn.getLocalPort() + " db=" + args[0]
			+ " customers=" + customers);
		System.out.flush();
		server.join();
	}
}
