// SPDX-License-Identifier: MIT
/*
 * EventsCapsWorkload.java - fixed work for bench/agent/events_caps.sh: THREADS threads each doing N
 * iterations of one kind of work, so a run's CPU time measures what the JVM spends on it.
 *
 *   java EventsCapsWorkload alloc|lock THREADS N
 *
 * alloc: objects and arrays of mixed sizes and classes, most dying young, some kept for a
 * while (the allocation fast path, TLAB refills and young GCs); lock: every thread enters one
 * shared monitor for a few nanoseconds of work, more threads than cores, so entries contend
 * and the monitor inflates (the monitor enter and exit paths, fast and slow).
 */
public class EventsCapsWorkload {
    static final Object LOCK = new Object();
    static long counter;
    static volatile Object sink;

    static final class Node {
        Node next;
        long v;

        Node(Node next, long v) {
            this.next = next;
            this.v = v;
        }
    }

    static long alloc(long n, int seed) {
        Object[] keep = new Object[1024];
        long sum = 0;

        for (long i = 0; i < n; i++) {
            int k = (int) (i * 31 + seed) & 1023;
            switch ((int) (i & 3)) {
            case 0:
                keep[k] = new byte[16 + (k & 255)];
                break;
            case 1:
                keep[k] = new Node(null, i);
                break;
            case 2:
                keep[k] = Long.toString(i);
                break;
            default:
                keep[k] = new int[4 + (k & 63)];
                break;
            }
            sum += k;
        }
        sink = keep;
        return sum;
    }

    static long lock(long n) {
        long local = 0;

        for (long i = 0; i < n; i++) {
            synchronized (LOCK) {
                counter++;
                local += counter & 7;
            }
        }
        return local;
    }

    public static void main(String[] args) throws Exception {
        final String mode = args[0];
        final int threads = Integer.parseInt(args[1]);
        final long n = Long.parseLong(args[2]);
        Thread[] ts = new Thread[threads];

        for (int t = 0; t < threads; t++) {
            final int seed = t;
            ts[t] = new Thread(() -> {
                long r = mode.equals("alloc") ? alloc(n, seed) : lock(n);
                sink = Long.valueOf(r);
            }, mode + "-" + t);
            ts[t].start();
        }
        for (Thread t : ts)
            t.join();
    }
}
