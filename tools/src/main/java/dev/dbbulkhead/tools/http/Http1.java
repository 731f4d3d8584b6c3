package dev.dbbulkhead.tools.http;

import java.io.BufferedInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.concurrent.ConcurrentLinkedDeque;

/**
 * A minimal HTTP/1.1 client for load: GET only, on blocking sockets (each request on a virtual thread of its own, so no
 * selector thread of the client's becomes the bottleneck, as the JDK's {@code HttpClient}'s single one did above a few
 * hundred requests a second here), connections kept alive and reused unless the server closes them (Tomcat closes
 * after a 503). Reads the status, then the body by its length or its chunks. Thread-safe.
 */
final class Http1 implements AutoCloseable {
    /** A request the server did not answer within its time: the client gave up. */
    static final class TimedOut extends IOException {
        TimedOut(String message) {
            super(message);
        }
    }

    private final InetSocketAddress address;
    private final ConcurrentLinkedDeque<Connection> idle = new ConcurrentLinkedDeque<>();

    private record Connection(Socket socket, InputStream in, OutputStream out) {}

    Http1(URI any) {
        this.address = new InetSocketAddress(any.getHost(), any.getPort() < 0 ? 80 : any.getPort());
    }

    /** The status of {@code GET target}, answered within {@code timeoutMillis} (connecting included). */
    int get(URI target, int timeoutMillis) throws IOException {
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
        Connection c = idle.pollFirst();
        boolean reused = c != null;
        if (c == null) {
            c = open(timeoutMillis);
        }
        try {
            return exchange(c, target, deadline);
        } catch (IOException e) {
            close(c);
            if (reused && !(e instanceof TimedOut)) {
                return get(target, (int) Math.max(1, (deadline - System.nanoTime()) / 1_000_000)); // it was stale
            }
            throw e;
        }
    }

    private Connection open(int timeoutMillis) throws IOException {
        var socket = new Socket();
        try {
            socket.setTcpNoDelay(true);
            socket.connect(address, timeoutMillis);
        } catch (SocketTimeoutException e) {
            socket.close();
            throw new TimedOut("connect: " + e.getMessage());
        } catch (IOException e) {
            socket.close();
            throw e;
        }
        return new Connection(socket, new BufferedInputStream(socket.getInputStream(), 8192), socket.getOutputStream());
    }

    private int exchange(Connection c, URI target, long deadline) throws IOException {
        String path = target.getRawPath() + (target.getRawQuery() == null ? "" : "?" + target.getRawQuery());
        c.out()
                .write(("GET " + path + " HTTP/1.1\r\nHost: " + address.getHostString() + ":" + address.getPort()
                                + "\r\nAccept: */*\r\n\r\n")
                        .getBytes(StandardCharsets.US_ASCII));
        c.out().flush();
        String status = line(c, deadline);
        int code = Integer.parseInt(status.substring(9, 12));
        long length = -1;
        boolean chunked = false;
        boolean close = false;
        for (String header = line(c, deadline); !header.isEmpty(); header = line(c, deadline)) {
            String h = header.toLowerCase(Locale.ROOT);
            if (h.startsWith("content-length:")) {
                length = Long.parseLong(h.substring(15).trim());
            } else if (h.startsWith("transfer-encoding:") && h.contains("chunked")) {
                chunked = true;
            } else if (h.startsWith("connection:") && h.contains("close")) {
                close = true;
            }
        }
        if (chunked) {
            for (long size = chunkSize(line(c, deadline)); size > 0; size = chunkSize(line(c, deadline))) {
                skip(c, size, deadline);
                line(c, deadline);
            }
            line(c, deadline); // the empty line after the last chunk (no trailers)
        } else if (length > 0) {
            skip(c, length, deadline);
        } else if (length < 0) {
            close = true; // read to the end: the connection cannot carry another request
        }
        if (close) {
            close(c);
        } else {
            idle.offerFirst(c);
        }
        return code;
    }

    /** A chunk's size line: hexadecimal digits, then maybe {@code ;} and extensions. */
    private static long chunkSize(String line) {
        int end = line.indexOf(';');
        return Long.parseLong((end < 0 ? line : line.substring(0, end)).trim(), 16);
    }

    private static void timeout(Connection c, long deadline) throws IOException {
        long left = (deadline - System.nanoTime()) / 1_000_000;
        if (left <= 0) {
            throw new TimedOut("no answer in time");
        }
        c.socket().setSoTimeout((int) Math.min(Integer.MAX_VALUE, left));
    }

    private static String line(Connection c, long deadline) throws IOException {
        var b = new StringBuilder(64);
        while (true) {
            timeout(c, deadline);
            int ch;
            try {
                ch = c.in().read();
            } catch (SocketTimeoutException e) {
                throw new TimedOut("no answer in time");
            }
            if (ch < 0) {
                throw new EOFException("closed by the server");
            }
            if (ch == '\n') {
                int n = b.length();
                return n > 0 && b.charAt(n - 1) == '\r' ? b.substring(0, n - 1) : b.toString();
            }
            b.append((char) ch);
        }
    }

    private static void skip(Connection c, long bytes, long deadline) throws IOException {
        for (long left = bytes; left > 0; ) {
            timeout(c, deadline);
            long n;
            try {
                n = c.in().skip(left);
            } catch (SocketTimeoutException e) {
                throw new TimedOut("no answer in time");
            }
            if (n <= 0) {
                if (c.in().read() < 0) {
                    throw new EOFException("closed by the server");
                }
                n = 1;
            }
            left -= n;
        }
    }

    private static void close(Connection c) {
        try {
            c.socket().close();
        } catch (IOException ignored) {
            // gone either way
        }
    }

    @Override
    public void close() {
        for (Connection c; (c = idle.pollFirst()) != null; ) {
            close(c);
        }
    }
}
