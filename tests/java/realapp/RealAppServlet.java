// SPDX-License-Identifier: MIT
import java.io.IOException;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import javax.servlet.ServletException;
import javax.servlet.http.HttpServlet;
import javax.servlet.http.HttpServletRequest;
import javax.servlet.http.HttpServletResponse;

/**
 * The service's one endpoint: a customer's record, its five largest orders, over a range of
 * 200 customers around it the orders counted and summed by region (a join and an aggregate,
 * so the database does real work), and the 50 largest orders of 40 customers around it as
 * JSON lines (so the service does some work of its own). A JDBC connection per worker thread, opened on its first
 * request and kept.
 */
public final class RealAppServlet extends HttpServlet {
	static final int ORDERS_PER = 10;
	private static final long serialVersionUID = 1L;
	private final String url;
	private final int customers;
	private final transient ThreadLocal<Connection> conn = new ThreadLocal<>();

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
		String q = req.getParameter("id");
		int id = q != null ? Integer.parseInt(q) : ThreadLocalRandom.current().nextInt(1, customers + 1);
		resp.setContentType("text/plain");
		PrintWriter out = resp.getWriter();
		try {
			Connection c = connection();
			try (PreparedStatement p = c.prepareStatement("SELECT name, region FROM customers WHERE id = ?")) {
				p.setInt(1, id);
				try (ResultSet r = p.executeQuery()) {
					while (r.next())
						out.println(r.getString(1) + " " + r.getString(2));
				}
			}
			try (PreparedStatement p = c.prepareStatement(
				     "SELECT id, amount FROM orders WHERE customer_id = ? ORDER BY amount DESC LIMIT 5")) {
				p.setInt(1, id);
				try (ResultSet r = p.executeQuery()) {
					while (r.next())
						out.println("order " + r.getInt(1) + " " + r.getBigDecimal(2));
				}
			}
			try (PreparedStatement p = c.prepareStatement(
				     "SELECT c.region, COUNT(*), SUM(o.amount) FROM orders o JOIN customers c"
				     + " ON c.id = o.customer_id WHERE c.id BETWEEN ? AND ?"
				     + " GROUP BY c.region ORDER BY 3 DESC")) {
				p.setInt(1, Math.max(1, id - 100));
				p.setInt(2, id + 100);
				try (ResultSet r = p.executeQuery()) {
					while (r.next())
						out.println(r.getString(1) + " " + r.getLong(2) + " " + r.getBigDecimal(3));
				}
			}
			// The range's largest orders with their customers, rendered as JSON lines.
			try (PreparedStatement p = c.prepareStatement(
				     "SELECT o.id, c.name, c.region, o.amount FROM orders o JOIN customers c"
				     + " ON c.id = o.customer_id WHERE c.id BETWEEN ? AND ?"
				     + " ORDER BY o.amount DESC, o.id LIMIT 50")) {
				p.setInt(1, Math.max(1, id - 20));
				p.setInt(2, id + 20);
				try (ResultSet r = p.executeQuery()) {
					while (r.next())
						out.println(String.format(Locale.ROOT,
							"{\"order\":%d,\"customer\":\"%s\",\"region\":\"%s\",\"amount\":%.2f}",
							r.getInt(1), r.getString(2), r.getString(3), r.getBigDecimal(4)));
				}
			}
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
	}
}
