package dev.dbbulkhead.tools.fleet;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What a fleet instance tells its coordinator on standard output, written and read in one place: a
 * {@code limit <epoch ms> <L>} line now and then (adaptive instances), and one {@code result key=value ...} line at
 * the end. Values contain no spaces.
 */
final class FleetLines {
    private static final String LIMIT = "limit ";
    private static final String RESULT = "result ";

    private FleetLines() {}

    /** An instance's output, read: its result's fields (empty if it printed none) and its limit series. */
    record Output(Map<String, String> result, List<long[]> limits) {}

    static String limit(long epochMillis, int limit) {
        return LIMIT + epochMillis + " " + limit;
    }

    /** The result line of {@code fields}, in their order. */
    static String result(Map<String, ?> fields) {
        var line = new StringBuilder(RESULT.strip());
        fields.forEach((key, value) -> line.append(' ').append(key).append('=').append(value));
        return line.toString();
    }

    static Output read(String text) {
        var result = new LinkedHashMap<String, String>();
        var limits = new ArrayList<long[]>();
        for (String line : text.split("\n", -1)) {
            if (line.startsWith(LIMIT)) {
                String[] parts = line.trim().split(" ", -1);
                limits.add(new long[] {Long.parseLong(parts[1]), Long.parseLong(parts[2])});
            } else if (line.startsWith(RESULT)) {
                for (String kv : line.substring(RESULT.length()).trim().split(" ", -1)) {
                    int eq = kv.indexOf('=');
                    result.put(kv.substring(0, eq), kv.substring(eq + 1));
                }
            }
        }
        return new Output(result, limits);
    }
}
