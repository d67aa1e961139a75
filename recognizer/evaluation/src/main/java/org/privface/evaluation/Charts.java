package org.privface.evaluation;

import java.awt.Color;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.lines.SeriesLines;
import org.knowm.xchart.style.markers.SeriesMarkers;

/** Line charts with error bars, written as PNG with XChart. */
public final class Charts {
    /**
     * One line; err may be null, dashed draws it as a dashed line (e.g. a theoretical curve), color
     * null takes the theme's next colour.
     */
    public record Series(String name, double[] x, double[] y, double[] err, boolean dashed, Color color) {
        public Series(String name, double[] x, double[] y, double[] err) {
            this(name, x, y, err, false, null);
        }
    }

    /** A y axis: fixed bounds (null = fitted to the data) and linear or logarithmic. */
    public record YAxis(Double min, Double max, boolean log) {
        public static final YAxis UNIT = new YAxis(0.0, 1.0, false);
        public static final YAxis AUTO = new YAxis(null, null, false);
        public static final YAxis LOG = new YAxis(null, null, true);
    }

    private Charts() {
    }

    /** A chart whose y axis is [0, 1] (scores), legend inside at the bottom right. */
    public static void line(Path png, String title, String xTitle, String yTitle, boolean logX, List<Series> series)
            throws IOException {
        line(png, title, xTitle, yTitle, logX, YAxis.UNIT, Styler.LegendPosition.InsideSE, series);
    }

    public static void line(Path png, String title, String xTitle, String yTitle, boolean logX, YAxis y,
                     Styler.LegendPosition legend, List<Series> series) throws IOException {
        line(png, title, xTitle, yTitle, logX, y, legend, 900, 560, series);
    }

    /** As above, at the given size in pixels (for charts with many series in the legend). */
    public static void line(Path png, String title, String xTitle, String yTitle, boolean logX, YAxis y,
                     Styler.LegendPosition legend, int width, int height, List<Series> series) throws IOException {
        System.setProperty("java.awt.headless", "true");
        XYChart chart = new XYChartBuilder().width(width).height(height).title(title).xAxisTitle(xTitle)
                .yAxisTitle(yTitle).build();
        chart.getStyler().setXAxisLogarithmic(logX);
        chart.getStyler().setYAxisLogarithmic(y.log());
        if (y.min() != null) {
            chart.getStyler().setYAxisMin(y.min());
        }
        if (y.max() != null) {
            chart.getStyler().setYAxisMax(y.max());
        }
        chart.getStyler().setLegendPosition(legend);
        chart.getStyler().setErrorBarsColorSeriesColor(true);
        for (Series s : series) {
            XYSeries xy = s.err() == null ? chart.addSeries(s.name(), s.x(), s.y())
                    : chart.addSeries(s.name(), s.x(), s.y(), s.err());
            xy.setMarker(SeriesMarkers.CIRCLE);
            if (s.dashed()) {
                xy.setLineStyle(SeriesLines.DASH_DASH);
            }
            if (s.color() != null) {
                xy.setLineColor(s.color());
                xy.setMarkerColor(s.color());
            }
        }
        BitmapEncoder.saveBitmap(chart, png.toString(), BitmapEncoder.BitmapFormat.PNG);
    }
}
