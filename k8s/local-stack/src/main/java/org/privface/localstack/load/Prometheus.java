package org.privface.localstack.load;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** One scrape of a service's /prometheus text, with sums over series filtered by label. */
final class Prometheus {
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private static final Pattern LINE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{(.*)\\})?\\s+(\\S+)");
    private static final Pattern LABEL = Pattern.compile("(\\w+)=\"((?:[^\"\\\\]|\\\\.)*)\"");

    private record Sample(String name, Map<String, String> labels, double value) {
    }

    private final List<Sample> samples;

    private Prometheus(List<Sample> samples) {
        this.samples = samples;
    }

    /** Scrapes http://127.0.0.1:PORT/prometheus; an empty scrape when the service does not answer. */
    static Prometheus scrape(int port) {
        try {
            HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/prometheus"))
                    .timeout(Duration.ofSeconds(5)).build(), HttpResponse.BodyHandlers.ofString());
            return r.statusCode() == 200 ? parse(r.body()) : new Prometheus(List.of());
        } catch (IOException e) {
            return new Prometheus(List.of());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return new Prometheus(List.of());
        }
    }

    static Prometheus parse(String text) {
        List<Sample> out = new ArrayList<>();
        for (String line : text.split("\n")) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            Matcher m = LINE.matcher(line);
            if (!m.find()) {
                continue;
            }
            Map<String, String> labels = new java.util.HashMap<>();
            if (m.group(3) != null) {
                Matcher l = LABEL.matcher(m.group(3));
                while (l.find()) {
                    labels.put(l.group(1), l.group(2));
                }
            }
            try {
                out.add(new Sample(m.group(1), labels, Double.parseDouble(m.group(4))));
            } catch (NumberFormatException e) {
                // e.g. a value of "NaN" spelled differently: skipped
            }
        }
        return new Prometheus(out);
    }

    boolean empty() {
        return samples.isEmpty();
    }

    /** Sum over every series of the metric whose labels include the given pairs; NaN when there is none. */
    double sum(String name, String... labelPairs) {
        double s = 0;
        boolean any = false;
        for (Sample x : samples) {
            if (x.name().equals(name) && matches(x.labels(), labelPairs)) {
                s += x.value();
                any = true;
            }
        }
        return any ? s : Double.NaN;
    }

    /** The largest value over the matching series (e.g. a quantile over sites); NaN when there is none. */
    double max(String name, String... labelPairs) {
        double m = Double.NaN;
        for (Sample x : samples) {
            if (x.name().equals(name) && matches(x.labels(), labelPairs) && !Double.isNaN(x.value())) {
                m = Double.isNaN(m) ? x.value() : Math.max(m, x.value());
            }
        }
        return m;
    }

    private static boolean matches(Map<String, String> labels, String[] pairs) {
        for (int i = 0; i + 1 < pairs.length; i += 2) {
            if (!pairs[i + 1].equals(labels.get(pairs[i]))) {
                return false;
            }
        }
        return true;
    }
}
