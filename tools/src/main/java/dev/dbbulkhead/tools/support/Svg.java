package dev.dbbulkhead.tools.support;

import java.util.List;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * The one way the tools draw a chart: an SVG of panels, each lines over time or groups of bars. Written by hand
 * rather than with a charting library: the four reports need two kinds of panel and a legend, which fit in this file,
 * the files stay small, diffable text, and the tools take no graphics dependency. Not thread-safe.
 */
public final class Svg {
    /** Colours for series, in order. */
    public static final List<String> COLOURS =
            List.of("#2b7bd9", "#d9822b", "#5aa02c", "#a02c8f", "#c0392b", "#888800");

    private final StringBuilder s = new StringBuilder();

    public Svg(int width, int height) {
        s.append(String.format(
                Locale.ROOT,
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
                        + "font-family=\"sans-serif\" font-size=\"12\">%n<rect width=\"100%%\" height=\"100%%\" "
                        + "fill=\"white\"/>%n",
                width,
                height));
    }

    /** A title, in bold, its baseline at ({@code x}, {@code y}). */
    public Svg title(int x, int y, String text) {
        s.append(String.format(
                Locale.ROOT, "<text x=\"%d\" y=\"%d\" font-weight=\"bold\">%s</text>%n", x, y, escape(text)));
        return this;
    }

    /** Plain text in {@code colour}. */
    public Svg text(double x, double y, String text, String colour) {
        s.append(String.format(
                Locale.ROOT, "<text x=\"%.1f\" y=\"%.1f\" fill=\"%s\">%s</text>%n", x, y, colour, escape(text)));
        return this;
    }

    /**
     * A panel of lines at ({@code x}, {@code y}), {@code w} × {@code h}, from (0, 0) to ({@code xMax}, {@code yMax}).
     */
    public Lines lines(int x, int y, int w, int h, double xMax, double yMax, String xUnit) {
        return new Lines(x, y, w, h, xMax, yMax, xUnit);
    }

    /** The document. */
    public String end() {
        return s + "</svg>\n";
    }

    /** One panel of lines; a legend to its right. */
    public final class Lines {
        private final int x;
        private final int y;
        private final int w;
        private final int h;
        private final double xMax;
        private final double yMax;
        private int legend;

        private Lines(int x, int y, int w, int h, double xMax, double yMax, String xUnit) {
            this.x = x;
            this.y = y;
            this.w = w;
            this.h = h;
            this.xMax = Math.max(xMax, 1e-9);
            this.yMax = Math.max(yMax, 1e-9);
            s.append(String.format(
                    Locale.ROOT,
                    "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#cccccc\"/>%n",
                    x,
                    y,
                    w,
                    h));
            text(x - 30, y + 10, String.format(Locale.ROOT, "%.0f", yMax), "black");
            text(x - 14, y + h + 4, "0", "black");
            text(x + w - 30, y + h + 16, String.format(Locale.ROOT, "%.0f %s", xMax, xUnit), "black");
        }

        private double px(double v) {
            return x + w * Math.min(1, Math.max(0, v / xMax));
        }

        private double py(double v) {
            return y + h - h * Math.min(1, Math.max(0, v / yMax));
        }

        /** A line through {@code points}, each {x, y}; named in the legend when {@code name} is not null. */
        public Lines line(List<double[]> points, String colour, double width, @Nullable String name) {
            var p = new StringBuilder();
            for (double[] point : points) {
                p.append(String.format(Locale.ROOT, "%.1f,%.1f ", px(point[0]), py(point[1])));
            }
            s.append(String.format(
                    Locale.ROOT,
                    "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"%.1f\" points=\"%s\"/>%n",
                    colour,
                    width,
                    p.toString().trim()));
            if (name != null) {
                s.append(String.format(
                        Locale.ROOT,
                        "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"3\" fill=\"%s\"/>%n",
                        x + w + 6,
                        y + 20 + legend * 18,
                        colour));
                text(x + w + 22, y + 25 + legend * 18, name, "black");
                legend++;
            }
            return this;
        }

        /** A dot at ({@code vx}, {@code vy}), labelled at its right. */
        public Lines point(double vx, double vy, String label, String colour) {
            s.append(String.format(
                    Locale.ROOT, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"/>%n", px(vx), py(vy), colour));
            text(px(vx) + 6, py(vy) - 4, label, colour);
            return this;
        }

        /** A dashed grey vertical at {@code value}, labelled at its top. */
        public Lines vertical(double value, String label) {
            double lx = px(value);
            return dashed(lx, y, lx, y + h, label, lx + 4, y + 12);
        }

        /** A dashed grey level at {@code value}, labelled at its right end. */
        public Lines level(double value, String label) {
            double ly = py(value);
            return dashed(x, ly, x + w, ly, label, x + w + 4, ly + 4);
        }

        /**
         * A dashed grey line from ({@code x1}, {@code y1}) to ({@code x2}, {@code y2}), its label at ({@code lx},
         * {@code ly}).
         */
        private Lines dashed(double x1, double y1, double x2, double y2, String label, double lx, double ly) {
            s.append(String.format(
                    Locale.ROOT,
                    "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"gray\" stroke-dasharray=\"4 "
                            + "3\"/>%n",
                    x1,
                    y1,
                    x2,
                    y2));
            text(lx, ly, label, "gray");
            return this;
        }
    }

    /**
     * Groups of bars, one group per label and one bar per series, at ({@code x}, {@code y}), {@code w} × {@code h};
     * each bar shows its value; {@code log}: a log scale from 0.01. A NaN value draws no bar.
     */
    public Svg bars(
            int x,
            int y,
            int w,
            int h,
            List<String> labels,
            double[][] series,
            List<String> names,
            List<String> colours,
            boolean log) {
        int plotH = h - 40;
        double max = 1;
        for (double[] values : series) {
            for (double v : values) {
                max = Double.isNaN(v) ? max : Math.max(max, v);
            }
        }
        double min = 0.01;
        double top = log ? Math.pow(10, Math.ceil(Math.log10(max))) : max * 1.15;
        s.append(String.format(
                Locale.ROOT,
                "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#cccccc\"/>%n",
                x,
                y,
                w,
                plotH));
        int groupW = w / Math.max(1, labels.size());
        int barW = Math.max(4, (groupW - 16) / series.length);
        for (int g = 0; g < labels.size(); g++) {
            for (int k = 0; k < series.length; k++) {
                double v = series[k][g];
                if (Double.isNaN(v)) {
                    continue;
                }
                double frac = log
                        ? (Math.log10(Math.max(v, min)) - Math.log10(min)) / (Math.log10(top) - Math.log10(min))
                        : v / top;
                int bh = (int) Math.round(Math.max(0, Math.min(1, frac)) * plotH);
                int bx = x + g * groupW + 8 + k * barW;
                s.append(String.format(
                        Locale.ROOT,
                        "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
                                + "fill=\"%s\"><title>%s %s: %s</title></rect>%n",
                        bx,
                        y + plotH - bh,
                        barW - 2,
                        bh,
                        colours.get(k % colours.size()),
                        escape(labels.get(g)),
                        escape(names.get(k)),
                        Stats.f(v)));
                s.append(String.format(
                        Locale.ROOT,
                        "<text x=\"%d\" y=\"%d\" font-size=\"10\" text-anchor=\"middle\">%s</text>%n",
                        bx + (barW - 2) / 2,
                        y + plotH - bh - 3,
                        Stats.f(v)));
            }
            // Staggered, so that long neighbouring names do not run into each other.
            s.append(String.format(
                    Locale.ROOT,
                    "<text x=\"%d\" y=\"%d\" font-size=\"10\" text-anchor=\"middle\">%s</text>%n",
                    x + g * groupW + groupW / 2,
                    y + plotH + (g % 2 == 0 ? 14 : 26),
                    escape(labels.get(g))));
        }
        for (int k = 0; series.length > 1 && k < series.length; k++) {
            int lx = x + 10 + k * 110;
            s.append(String.format(
                    Locale.ROOT,
                    "<rect x=\"%d\" y=\"%d\" width=\"10\" height=\"10\" fill=\"%s\"/>%n",
                    lx,
                    y + plotH + 32,
                    colours.get(k % colours.size())));
            text(lx + 14, y + plotH + 41, names.get(k), "black");
        }
        return this;
    }

    private static String escape(String text) {
        return text.replace("&", "&amp;").replace("<", "&lt;");
    }
}
