package dev.dbbulkhead.tools.support;

import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;
import org.HdrHistogram.Histogram;

/** The statistics every report of the tools uses, once each. */
public final class Stats {
    private Stats() {}

    /** The median of {@code metric} over {@code runs}; NaN for none. */
    public static <R> double median(List<R> runs, ToDoubleFunction<R> metric) {
        double[] v = runs.stream().mapToDouble(metric).sorted().toArray();
        if (v.length == 0) {
            return Double.NaN;
        }
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

    /** The median of {@code metric} over {@code runs}, and its spread: "m (min–max)"; the median alone for one run. */
    public static <R> String spread(List<R> runs, ToDoubleFunction<R> metric) {
        double lo = runs.stream().mapToDouble(metric).min().orElse(Double.NaN);
        double hi = runs.stream().mapToDouble(metric).max().orElse(Double.NaN);
        return f(median(runs, metric)) + (runs.size() > 1 ? " (" + f(lo) + "–" + f(hi) + ")" : "");
    }

    /** The {@code percentile} of {@code h} in milliseconds; NaN when it recorded nothing. */
    public static double ms(Histogram h, double percentile) {
        return h.getTotalCount() == 0 ? Double.NaN : h.getValueAtPercentile(percentile) / 1e6;
    }

    /** A value for a table: no decimals from 100 up, one below, "–" for NaN. */
    public static String f(double v) {
        if (Double.isNaN(v)) {
            return "–";
        }
        return v >= 100 ? String.format(Locale.ROOT, "%.0f", v) : String.format(Locale.ROOT, "%.1f", v);
    }

    /** The 95 % Wilson score interval of {@code k} successes in {@code n}: {low, high}. */
    public static double[] wilson(long k, long n) {
        double z = 1.96;
        double p = (double) k / n;
        double denominator = 1 + z * z / n;
        double centre = (p + z * z / (2 * n)) / denominator;
        double half = z * Math.sqrt(p * (1 - p) / n + z * z / (4.0 * n * n)) / denominator;
        return new double[] {Math.max(0, centre - half), Math.min(1, centre + half)};
    }
}
