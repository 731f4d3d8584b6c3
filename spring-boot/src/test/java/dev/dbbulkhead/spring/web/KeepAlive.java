package dev.dbbulkhead.spring.web;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** HTTP/1.1 requests sent one after another on one TCP connection, as a keep-alive client sends them. */
final class KeepAlive {
    private KeepAlive() {}

    /** The status codes answered, in order, until {@code requests} were sent or the server closed the connection. */
    static List<Integer> statuses(int port, String path, int requests) throws IOException {
        var statuses = new ArrayList<Integer>();
        try (var socket = new Socket("localhost", port)) {
            socket.setSoTimeout(10_000);
            var out = socket.getOutputStream();
            var in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.ISO_8859_1));
            for (int i = 0; i < requests; i++) {
                out.write(("GET " + path + " HTTP/1.1\r\nHost: localhost\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                out.flush();
                String status = in.readLine();
                if (status == null) {
                    break; // closed by the server
                }
                statuses.add(Integer.parseInt(status.split(" ")[1]));
                if (!skipResponse(in)) {
                    break;
                }
            }
        }
        return statuses;
    }

    /** Past the headers and the body; false when the server said it closes the connection. */
    private static boolean skipResponse(BufferedReader in) throws IOException {
        int length = 0;
        boolean chunked = false;
        boolean keep = true;
        for (String h = in.readLine(); h != null && !h.isEmpty(); h = in.readLine()) {
            String header = h.toLowerCase(Locale.ROOT);
            if (header.startsWith("content-length:")) {
                length = Integer.parseInt(header.substring(15).strip());
            } else if (header.startsWith("transfer-encoding:") && header.contains("chunked")) {
                chunked = true;
            } else if (header.startsWith("connection:") && header.contains("close")) {
                keep = false;
            }
        }
        if (chunked) {
            for (int size = Integer.parseInt(in.readLine().strip(), 16);
                    size > 0;
                    size = Integer.parseInt(in.readLine().strip(), 16)) {
                in.skip(size);
                in.readLine();
            }
            in.readLine();
        } else {
            in.skip(length);
        }
        return keep;
    }
}
