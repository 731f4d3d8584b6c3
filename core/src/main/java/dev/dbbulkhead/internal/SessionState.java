package dev.dbbulkhead.internal;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * Keeps the session the pool's when work sent SQL that may change it in a way its text cannot show (a {@code DO}
 * block with dynamic SQL, a {@code CALL} of a procedure whose body is not plain PL/pgSQL ({@link #plainProcedure}),
 * {@code set_config} with a computed scope, text naming {@code pg_temp}: {@link TransactionControl}'s risks). What the
 * text shows is refused before it runs; this is the net under what it cannot show.
 *
 * <p>The session is read as one text ({@link #fingerprint}): the role, every setting set for the session or by the
 * client, session-level advisory locks, temporary tables, cursors, SQL-level prepared statements and channels
 * listened to. The first transaction from a call site (the work's class) that sends a risky statement has its
 * connection discarded, since nothing was read before it; from then on, transactions from that call site read the
 * session before they begin (in auto-commit, before the transaction's own {@code SET LOCAL}s) and again after they
 * end, and a connection whose session changed is discarded. Discarded: HikariCP's {@code evictConnection} where the
 * data source has it, else {@link Connection#abort}, then {@code close}, so that the pool opens a new connection
 * instead of lending this one again. Each discard is reported ({@code onSessionDiscarded}) and logged once per call
 * site. PostgreSQL only; ordinary SQL never reaches this class.
 *
 * <p>Thread-safe; one instance per barrier.
 */
final class SessionState {
    /**
     * The session as the next caller would find it, one round trip: about 0.5 ms of server time measured on PostgreSQL
     * 15 (pgbench: 0.48 ms for {@code pg_show_all_settings()}, 0.15 ms for the rest, 0.07 ms for {@code SELECT 1});
     * through the barrier, a compared transaction costs 8× a trivial one (performance.md §15). Run in auto-commit (or
     * after the transaction ended), so that nothing transaction-scoped is in it.
     */
    static final String FINGERPRINT = "SELECT current_user || '|' || session_user"
            + " || '|' || coalesce((SELECT string_agg(name || '=' || setting, ',' ORDER BY name) FROM pg_settings"
            + " WHERE source IN ('session', 'client')), '')"
            + " || '|' || (SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid())"
            + " || '|' || (SELECT count(*) FROM pg_class WHERE relnamespace = pg_my_temp_schema())"
            + " || '|' || (SELECT count(*) FROM pg_proc WHERE pronamespace = pg_my_temp_schema())"
            + " || '|' || (SELECT count(*) FROM pg_type WHERE typnamespace = pg_my_temp_schema())"
            + " || '|' || (SELECT count(*) FROM pg_cursors WHERE is_holdable)"
            + " || '|' || (SELECT count(*) FROM pg_prepared_statements WHERE from_sql)"
            + " || '|' || (SELECT count(*) FROM pg_listening_channels())";

    /** What one call site has shown so far. */
    static final class CallSite {
        /** A transaction from it sent a risky statement: read the session before its next ones. */
        volatile boolean risky;

        final AtomicBoolean logged = new AtomicBoolean();
    }

    private final ClassValue<CallSite> sites = new ClassValue<>() {
        @Override
        protected CallSite computeValue(Class<?> type) {
            return new CallSite();
        }
    };
    /** Whether any call site has been risky: until then a transaction costs one volatile read here. */
    private volatile boolean anyRisky;

    private final Discard discard;
    /** Sessions as last compared, by physical connection (weakly: a connection the pool closed is forgotten). */
    private final Map<Object, String> known = new WeakHashMap<>();

    SessionState(DataSource source) {
        this.discard = Discard.of(source);
    }

    /** Whether a transaction of {@code work}'s class should read the session before it begins. */
    boolean watched(Class<?> work) {
        return anyRisky && sites.get(work).risky;
    }

    CallSite site(Class<?> work) {
        return sites.get(work);
    }

    void sawRisk(CallSite site) {
        site.risky = true;
        anyRisky = true;
    }

    void discard(Connection raw) throws SQLException {
        discard.discard(raw);
    }

    /**
     * The session's state as one text (see {@link #FINGERPRINT}). A prepared statement: the driver prepares it on the
     * server after a few uses on a connection (pgJDBC's {@code prepareThreshold}), which halves its cost.
     */
    static String fingerprint(Connection raw) throws SQLException {
        try (var statement = raw.prepareStatement(FINGERPRINT);
                var r = statement.executeQuery()) {
            r.next();
            return r.getString(1);
        }
    }

    /**
     * The session of {@code raw}'s physical connection as a compared transaction last left it, or null. Nothing else
     * can change it in between (the guard refuses what the text shows; what it cannot show is compared or discarded),
     * so a call site watched again on this connection needs no read before, and one first seen is compared with it
     * rather than discarded.
     */
    @Nullable
    String known(Connection raw) {
        Object physical = physical(raw);
        synchronized (known) {
            return known.get(physical);
        }
    }

    /** Remembers {@code fingerprint} as the session of {@code raw}'s physical connection. */
    void remember(Connection raw, String fingerprint) {
        Object physical = physical(raw);
        synchronized (known) {
            known.put(physical, fingerprint);
        }
    }

    /** The driver's connection under the pool's proxy (a new proxy each time the pool lends it), else the proxy. */
    private static Object physical(Connection raw) {
        try {
            return raw.isWrapperFor(Connection.class) ? raw.unwrap(Connection.class) : raw;
        } catch (SQLException | RuntimeException e) {
            return raw;
        }
    }

    /** The bodies of the procedures of one name (in one schema, or in any), with their languages. */
    static final String PROCEDURES = "SELECT l.lanname, p.prosrc FROM pg_catalog.pg_proc p"
            + " JOIN pg_catalog.pg_language l ON l.oid = p.prolang WHERE p.prokind = 'p' AND p.proname = ?"
            + " AND (CAST(? AS text) IS NULL"
            + " OR p.pronamespace = (SELECT oid FROM pg_catalog.pg_namespace WHERE nspname = ?))";

    /**
     * Whether {@code sql}, one {@code CALL} and nothing else, calls a procedure whose body shows no session change:
     * every procedure of that name (in its schema, or in any when the name is not qualified) is PL/pgSQL and its body
     * reads as a plain {@code DO} block's does ({@link TransactionControl#plainBody}). One catalog query, inside the
     * transaction, before the {@code CALL} is sent; any doubt (no such procedure, another language, the query failed)
     * says no, and the session is compared as for any risk.
     */
    static boolean plainProcedure(Connection raw, String sql) {
        String[] name = TransactionControl.calledProcedure(sql);
        if (name == null) {
            return false;
        }
        try (var query = raw.prepareStatement(PROCEDURES)) {
            query.setString(1, name[1]);
            query.setString(2, name[0]);
            query.setString(3, name[0]);
            boolean any = false;
            try (var r = query.executeQuery()) {
                while (r.next()) {
                    any = true;
                    if (!"plpgsql".equals(r.getString(1)) || !TransactionControl.plainBody(r.getString(2))) {
                        return false;
                    }
                }
            }
            return any;
        } catch (SQLException | RuntimeException e) {
            return false;
        }
    }

    /** How a connection is taken out of its pool instead of going back to it; chosen once from the data source. */
    @FunctionalInterface
    interface Discard {
        void discard(Connection raw) throws SQLException;

        static Discard of(DataSource source) {
            Method evict;
            try {
                evict = source.getClass().getMethod("evictConnection", Connection.class);
            } catch (NoSuchMethodException | RuntimeException e) {
                evict = null;
            }
            if (evict == null) {
                return Discard::abortAndClose;
            }
            Method method = evict;
            return raw -> {
                try {
                    method.invoke(source, raw);
                } catch (IllegalAccessException | InvocationTargetException | RuntimeException e) {
                    abortAndClose(raw);
                    return;
                }
                raw.close();
            };
        }

        private static void abortAndClose(Connection raw) throws SQLException {
            try {
                raw.abort(Runnable::run);
            } finally {
                raw.close();
            }
        }
    }
}
