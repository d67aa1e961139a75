package org.privface.localstack;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/** What the fault tests share: signals to processes, JSON over HTTP, whole-topic reads, bounded waits. */
final class FaultKit {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private FaultKit() {
    }

    /**
     * Sends a signal with kill(1): STOP freezes a process (a broker that hangs: connections stay open,
     * nothing is answered), CONT resumes it.
     */
    static void signal(long pid, String signal) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).redirectErrorStream(true).start();
        if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0) {
            p.destroyForcibly();
            throw new IllegalStateException("kill -" + signal + " " + pid + " failed: "
                    + new String(p.getInputStream().readAllBytes()));
        }
    }

    /** GET with an optional bearer token; the body parsed as a JSON object. */
    @SuppressWarnings("unchecked")
    static Map<String, Object> json(String url, String token) throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10));
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        HttpResponse<String> r = HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200 && r.statusCode() != 503) { // /health answers 503 with its details when DOWN
            throw new IOException("GET " + url + ": " + r.statusCode() + " " + r.body());
        }
        return JSON.readValue(r.body(), Map.class);
    }

    /** GET with an optional bearer token; the body parsed as a JSON array of objects. */
    @SuppressWarnings("unchecked")
    static List<Map<String, Object>> jsonList(String url, String token) throws IOException, InterruptedException {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10));
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        HttpResponse<String> r = HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new IOException("GET " + url + ": " + r.statusCode() + " " + r.body());
        }
        return JSON.readValue(r.body(), List.class);
    }

    /** A value in nested JSON by a dotted path ("cameras.door.frames"); null when absent. */
    @SuppressWarnings("unchecked")
    static Object at(Map<String, Object> json, String path) {
        Object cur = json;
        for (String part : path.split("\\.")) {
            if (!(cur instanceof Map<?, ?> m)) {
                return null;
            }
            cur = ((Map<String, Object>) m).get(part);
        }
        return cur;
    }

    static long number(Map<String, Object> json, String path) {
        Object v = at(json, path);
        if (!(v instanceof Number n)) {
            throw new IllegalStateException("no number at " + path + " in " + json);
        }
        return n.longValue();
    }

    /** Every record of the topics, read by assignment from the beginning to the end offsets at the start. */
    static List<ConsumerRecord<String, byte[]>> readAll(String bootstrap, List<String> topics, Duration timeout) {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        List<ConsumerRecord<String, byte[]>> out = new ArrayList<>();
        try (KafkaConsumer<String, byte[]> c = new KafkaConsumer<>(p, new StringDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> tps = new ArrayList<>();
            for (String t : topics) {
                c.partitionsFor(t, Duration.ofSeconds(10)).forEach(pi -> tps.add(new TopicPartition(t, pi.partition())));
            }
            c.assign(tps);
            c.seekToBeginning(tps);
            Map<TopicPartition, Long> end = c.endOffsets(tps, Duration.ofSeconds(10));
            long deadline = System.nanoTime() + timeout.toNanos();
            while (tps.stream().anyMatch(tp -> c.position(tp) < end.get(tp))) {
                if (System.nanoTime() > deadline) {
                    fail("could not read " + topics + " to its end within " + timeout);
                }
                c.poll(Duration.ofMillis(200)).forEach(out::add);
            }
        }
        return out;
    }

    static void awaitTrue(String what, Duration timeout, BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                fail("no " + what + " within " + timeout);
            }
            Thread.sleep(100);
        }
    }

    /** Waits until a counter has not changed for 1.5 s: a frame can take longer than one poll to go through. */
    static void awaitStable(String what, Duration timeout, java.util.function.LongSupplier counter)
            throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        long last = counter.getAsLong();
        long since = System.nanoTime();
        while (System.nanoTime() - since < 1_500_000_000L) {
            if (System.nanoTime() > deadline) {
                fail(what + " still changing after " + timeout);
            }
            Thread.sleep(100);
            long now = counter.getAsLong();
            if (now != last) {
                last = now;
                since = System.nanoTime();
            }
        }
    }

    /** A condition that may throw while a service is down (refused connections read as false). */
    interface Probe {
        boolean test() throws Exception;
    }

    static BooleanSupplier quietly(Probe p) {
        return () -> {
            try {
                return p.test();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            } catch (Exception e) {
                return false;
            }
        };
    }

    static double seconds(long sinceNanos) {
        return (System.nanoTime() - sinceNanos) / 1e9;
    }

    /** Closes what a test started, last started first, going on past failures. */
    static void closeAll(List<AutoCloseable> running) {
        for (int i = running.size() - 1; i >= 0; i--) {
            try {
                running.get(i).close();
            } catch (Exception e) {
                // keep stopping the rest
            }
        }
        running.clear();
    }

    /** The logs (*.log, *.csv) of a failed run, kept for reading. */
    static void keepLogs(Path work, Path into) {
        try (Stream<Path> s = Files.list(work)) {
            Files.createDirectories(into);
            for (Path p : s.filter(p -> p.toString().endsWith(".log") || p.toString().endsWith(".csv")).toList()) {
                Files.copy(p, into.resolve(p.getFileName()), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            }
            System.out.println("logs kept in " + into);
        } catch (IOException e) {
            System.out.println("could not keep the logs: " + e);
        }
    }

    static void deleteRecursively(Path dir) {
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // a temporary directory: best effort
        }
    }
}
