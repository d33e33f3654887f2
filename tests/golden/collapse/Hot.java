// Hot.java - the workload whose `perf script` output the collapse golden tests replay.
// Deep Java call chains (JIT-compiled and inlined), string work, allocation (GC threads)
// and a little file I/O (kernel frames), for a few seconds.
import java.io.FileOutputStream;
import java.io.IOException;

public class Hot {
	static long sink;

	static long leaf(long x) {
		for (int i = 0; i < 200; i++)
			x = x * 6364136223846793005L + 1442695040888963407L;
		return x;
	}

	static long mid(int depth, long x) {
		return depth == 0 ? leaf(x) : mid(depth - 1, x + depth);
	}

	static String text(int n) {
		StringBuilder sb = new StringBuilder();
		for (int i = 0; i < n; i++)
			sb.append(Integer.toHexString(i * 31));
		return sb.toString();
	}

	static volatile Object keep;

	static void churn(long end) {
		while (System.nanoTime() < end) {
			Object[] a = new Object[1000];
			for (int i = 0; i < a.length; i++)
				a[i] = text(i % 17);
			keep = a;
		}
	}

	public static void main(String[] args) throws IOException {
		long end = System.nanoTime() + Long.parseLong(args[0]) * 1000000000L;
		final long stop = end;
		Thread t = new Thread(() -> churn(stop), "alloc worker");
		t.start();
		byte[] buf = new byte[4096];
		try (FileOutputStream out = new FileOutputStream("/dev/null")) {
			while (System.nanoTime() < end) {
				for (int i = 0; i < 2000; i++)
					sink += mid(i % 12, i);
				sink += text(300).hashCode();
				out.write(buf);
			}
		}
		System.out.println(sink);
	}
}
