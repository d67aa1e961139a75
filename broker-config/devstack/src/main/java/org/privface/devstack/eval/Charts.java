package org.privface.devstack.eval;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.markers.SeriesMarkers;

/** Line charts with error bars, written as PNG with XChart. */
final class Charts {
    record Series(String name, double[] x, double[] y, double[] err) {
    }

    private Charts() {
    }

    static void line(Path png, String title, String xTitle, String yTitle, boolean logX, List<Series> series)
            throws IOException {
        System.setProperty("java.awt.headless", "true");
        XYChart chart = new XYChartBuilder().width(900).height(560).title(title).xAxisTitle(xTitle).yAxisTitle(yTitle)
                .build();
        chart.getStyler().setXAxisLogarithmic(logX);
        chart.getStyler().setYAxisMin(0.0);
        chart.getStyler().setYAxisMax(1.0);
        chart.getStyler().setLegendPosition(org.knowm.xchart.style.Styler.LegendPosition.InsideSE);
        chart.getStyler().setErrorBarsColorSeriesColor(true);
        for (Series s : series) {
            XYSeries xy = s.err() == null ? chart.addSeries(s.name(), s.x(), s.y())
                    : chart.addSeries(s.name(), s.x(), s.y(), s.err());
            xy.setMarker(SeriesMarkers.CIRCLE);
        }
        BitmapEncoder.saveBitmap(chart, png.toString(), BitmapEncoder.BitmapFormat.PNG);
    }
}
