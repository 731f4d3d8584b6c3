package dev.dbbulkhead.tools.support;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A client for PgBouncer's admin console ({@code SHOW POOLS}, {@code SHOW DATABASES}, {@code SHOW CONFIG}) over
 * PostgreSQL's simple query protocol. pgJDBC cannot be used there: it sends {@code SET extra_float_digits} to any
 * server older than PostgreSQL 12, and the console (which reports its own version, e.g. 1.18) refuses every
 * {@code SET}. Authentication: trust, cleartext or MD5 (PgBouncer's {@code auth_type}s short of SCRAM). Rows come
 * back as column name → text, so that PgBouncer versions with other column sets parse alike. Not thread-safe.
 */
public final class AdminConsole implements AutoCloseable {
    private final Socket socket;
    private final DataInputStream in;
    private final DataOutputStream out;

    private AdminConsole(Socket socket) throws IOException {
        this.socket = socket;
        this.in = new DataInputStream(new BufferedInputStream(socket.getInputStream()));
        this.out = new DataOutputStream(new BufferedOutputStream(socket.getOutputStream()));
    }

    /**
     * Connects to the console at {@code hostPort} ({@code HOST:PORT}, as {@code --pgbouncer} takes it).
     *
     * @throws IllegalArgumentException naming {@code --pgbouncer} when {@code hostPort} is not HOST:PORT
     */
    public static AdminConsole connect(String hostPort, String user, String password) throws IOException {
        int colon = hostPort.lastIndexOf(':');
        try {
            if (colon > 0) {
                return connect(
                        hostPort.substring(0, colon), Integer.parseInt(hostPort.substring(colon + 1)), user, password);
            }
        } catch (NumberFormatException notAPort) {
            // reported below
        }
        throw new IllegalArgumentException("--pgbouncer must be HOST:PORT, was " + hostPort);
    }

    /** Connects to the console database {@code pgbouncer} at {@code host:port} as {@code user}. */
    public static AdminConsole connect(String host, int port, String user, String password) throws IOException {
        var socket = new Socket();
        try {
            socket.connect(new InetSocketAddress(host, port), 5_000);
            socket.setSoTimeout(10_000);
            var console = new AdminConsole(socket);
            console.startup(user, password);
            return console;
        } catch (IOException | RuntimeException e) {
            socket.close();
            throw e;
        }
    }

    private void startup(String user, String password) throws IOException {
        var body = new ByteArrayOutputStream();
        var data = new DataOutputStream(body);
        data.writeInt(196_608); // protocol 3.0
        for (String s : new String[] {"user", user, "database", "pgbouncer"}) {
            data.write(s.getBytes(StandardCharsets.UTF_8));
            data.write(0);
        }
        data.write(0);
        out.writeInt(body.size() + 4);
        body.writeTo(out);
        out.flush();
        while (true) {
            int type = in.readUnsignedByte();
            byte[] message = readBody();
            switch (type) {
                case 'R' -> authenticate(message, user, password);
                case 'E' -> throw new IOException("PgBouncer refused the login: " + error(message));
                case 'Z' -> {
                    return;
                }
                default -> {} // parameter status, backend key data
            }
        }
    }

    private void authenticate(byte[] message, String user, String password) throws IOException {
        int code = ((message[0] & 0xff) << 24)
                | ((message[1] & 0xff) << 16)
                | ((message[2] & 0xff) << 8)
                | (message[3] & 0xff);
        switch (code) {
            case 0 -> {} // authenticated
            case 3 -> sendPassword(password);
            case 5 -> {
                byte[] salt = {message[4], message[5], message[6], message[7]};
                String inner = md5Hex((password + user).getBytes(StandardCharsets.UTF_8));
                byte[] outer = concat(inner.getBytes(StandardCharsets.UTF_8), salt);
                sendPassword("md5" + md5Hex(outer));
            }
            default ->
                throw new IOException("PgBouncer asks for an authentication this tool does not speak (code " + code
                        + "; SCRAM is not supported): use auth_type trust, plain or md5 for the admin user");
        }
    }

    private void sendPassword(String password) throws IOException {
        byte[] bytes = password.getBytes(StandardCharsets.UTF_8);
        out.writeByte('p');
        out.writeInt(bytes.length + 5);
        out.write(bytes);
        out.write(0);
        out.flush();
    }

    /** The rows of one console command, each a map from column name to text (null for NULL). */
    public List<Map<String, String>> query(String sql) throws IOException {
        byte[] bytes = sql.getBytes(StandardCharsets.UTF_8);
        out.writeByte('Q');
        out.writeInt(bytes.length + 5);
        out.write(bytes);
        out.write(0);
        out.flush();
        List<String> columns = List.of();
        var rows = new ArrayList<Map<String, String>>();
        String failure = null;
        while (true) {
            int type = in.readUnsignedByte();
            byte[] message = readBody();
            switch (type) {
                case 'T' -> columns = columns(message);
                case 'D' -> rows.add(row(message, columns));
                case 'E' -> failure = error(message);
                case 'Z' -> {
                    if (failure != null) {
                        throw new IOException("PgBouncer: " + sql + ": " + failure);
                    }
                    return rows;
                }
                default -> {} // command complete, notices
            }
        }
    }

    private byte[] readBody() throws IOException {
        int length = in.readInt();
        if (length < 4 || length > 16 << 20) {
            throw new IOException("not a PostgreSQL protocol message (length " + length + ")");
        }
        byte[] body = new byte[length - 4];
        in.readFully(body);
        return body;
    }

    private static List<String> columns(byte[] m) {
        int n = ((m[0] & 0xff) << 8) | (m[1] & 0xff);
        var names = new ArrayList<String>(n);
        int at = 2;
        for (int i = 0; i < n; i++) {
            int end = at;
            while (m[end] != 0) {
                end++;
            }
            names.add(new String(m, at, end - at, StandardCharsets.UTF_8));
            at = end + 1 + 18; // table oid, column number, type oid, size, modifier, format
        }
        return names;
    }

    private static Map<String, String> row(byte[] m, List<String> columns) {
        int n = ((m[0] & 0xff) << 8) | (m[1] & 0xff);
        var row = new LinkedHashMap<String, String>();
        int at = 2;
        for (int i = 0; i < n; i++) {
            int length = ((m[at] & 0xff) << 24)
                    | ((m[at + 1] & 0xff) << 16)
                    | ((m[at + 2] & 0xff) << 8)
                    | (m[at + 3] & 0xff);
            at += 4;
            String value = length < 0 ? null : new String(m, at, length, StandardCharsets.UTF_8);
            at += Math.max(0, length);
            row.put(i < columns.size() ? columns.get(i) : "column" + i, value);
        }
        return row;
    }

    private static String error(byte[] m) {
        int at = 0;
        while (at < m.length && m[at] != 0) {
            byte field = m[at++];
            int end = at;
            while (end < m.length && m[end] != 0) {
                end++;
            }
            if (field == 'M') {
                return new String(m, at, end - at, StandardCharsets.UTF_8);
            }
            at = end + 1;
        }
        return "(no message)";
    }

    private static String md5Hex(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("MD5").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] all = new byte[a.length + b.length];
        System.arraycopy(a, 0, all, 0, a.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        return all;
    }

    @Override
    public void close() throws IOException {
        try {
            out.writeByte('X');
            out.writeInt(4);
            out.flush();
        } finally {
            socket.close();
        }
    }
}
