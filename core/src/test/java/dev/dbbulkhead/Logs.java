package dev.dbbulkhead;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;

/**
 * What the barrier logs at {@code level} or above while open (core logs through {@code System.Logger}, which lands in
 * java.util.logging in these tests), as formatted messages and their throwables.
 */
final class Logs implements AutoCloseable {
    private final Logger logger = Logger.getLogger(DbBulkhead.class.getName());
    private final Level previous = logger.getLevel();
    private final List<LogRecord> records = new CopyOnWriteArrayList<>();
    private final Handler handler;

    Logs(Level level) {
        handler = new Handler() {
            @Override
            public void publish(LogRecord record) {
                if (record.getLevel().intValue() >= level.intValue()) {
                    records.add(record);
                }
            }

            @Override
            public void flush() {}

            @Override
            public void close() {}
        };
        logger.setLevel(level);
        logger.addHandler(handler);
        logger.setUseParentHandlers(false); // captured, not printed
    }

    /** The messages logged so far, formatted. */
    List<String> messages() {
        var formatter = new SimpleFormatter();
        return records.stream().map(formatter::formatMessage).toList();
    }

    List<LogRecord> records() {
        return List.copyOf(records);
    }

    @Override
    public void close() {
        logger.removeHandler(handler);
        logger.setLevel(previous);
        logger.setUseParentHandlers(true);
    }
}
