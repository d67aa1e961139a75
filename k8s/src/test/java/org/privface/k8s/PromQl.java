package org.privface.k8s;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A small recursive-descent parser of PromQL expressions (Prometheus 2.x grammar: selectors with
 * label matchers, range and subquery selectors, offset, functions, aggregations with by/without,
 * binary operators with bool/on/ignoring/group_left/group_right and their precedence). It answers
 * the metric names an expression selects, or throws naming where it fails. Hand-written because no
 * Java PromQL parser resolves from Maven Central here; it refuses what Prometheus refuses for the
 * constructs the rules use (an unknown function, an unbalanced bracket, a dangling operator, a
 * range on an expression, a bad duration).
 */
final class PromQl {
    static final Set<String> FUNCTIONS = Set.of("abs", "absent", "absent_over_time", "ceil", "changes", "clamp",
            "clamp_max", "clamp_min", "day_of_month", "day_of_week", "days_in_month", "delta", "deriv", "exp", "floor",
            "histogram_quantile", "holt_winters", "hour", "idelta", "increase", "irate", "label_join", "label_replace",
            "ln", "log2", "log10", "minute", "month", "predict_linear", "rate", "resets", "round", "scalar", "sort",
            "sort_desc", "sqrt", "time", "timestamp", "vector", "year", "avg_over_time", "min_over_time",
            "max_over_time", "sum_over_time", "count_over_time", "quantile_over_time", "stddev_over_time",
            "stdvar_over_time", "last_over_time", "present_over_time");
    static final Set<String> AGGREGATIONS = Set.of("sum", "min", "max", "avg", "group", "stddev", "stdvar", "count",
            "count_values", "bottomk", "topk", "quantile");
    private static final Pattern TOKEN = Pattern.compile(
            "\\s*(?:(?<num>0x[0-9a-fA-F]+|[0-9]*\\.?[0-9]+(?:[eE][-+]?[0-9]+)?(?![a-zA-Z_0-9.]))|(?<dur>(?:[0-9]+(?:ms|s|m|h|d|w|y))+)"
                    + "|(?<id>[a-zA-Z_][a-zA-Z0-9_:]*)|(?<str>\"(?:[^\"\\\\]|\\\\.)*\"|'(?:[^'\\\\]|\\\\.)*'|`[^`]*`)"
                    + "|(?<op>==|!=|=~|!~|>=|<=|[-+*/%^<>=(){}\\[\\],:@]))");
    private static final Set<String> KEYWORDS = Set.of("by", "without", "on", "ignoring", "group_left", "group_right",
            "bool", "offset", "and", "or", "unless");

    private final List<String> tokens = new ArrayList<>();
    private final List<String> kinds = new ArrayList<>();
    private final Set<String> metrics = new LinkedHashSet<>();
    private final String text;
    private int at;

    private PromQl(String text) {
        this.text = text;
        Matcher m = TOKEN.matcher(text);
        int pos = 0;
        while (pos < text.length()) {
            if (text.substring(pos).isBlank()) {
                break;
            }
            if (!m.find(pos) || m.start() != pos) {
                throw new IllegalArgumentException("unexpected character at " + pos + " of: " + text);
            }
            for (String k : List.of("num", "dur", "id", "str", "op")) {
                if (m.group(k) != null) {
                    tokens.add(m.group(k));
                    kinds.add(k);
                }
            }
            pos = m.end();
        }
    }

    /** The metric names an expression selects; throws IllegalArgumentException where it is not PromQL. */
    static Set<String> metrics(String expr) {
        PromQl p = new PromQl(expr);
        p.expr(0);
        if (p.at != p.tokens.size()) {
            throw p.error("unexpected '" + p.tokens.get(p.at) + "'");
        }
        return p.metrics;
    }

    private IllegalArgumentException error(String what) {
        return new IllegalArgumentException(what + " at token " + at + " of: " + text);
    }

    private String peek() {
        return at < tokens.size() ? tokens.get(at) : null;
    }

    private String kind() {
        return at < kinds.size() ? kinds.get(at) : null;
    }

    private String next() {
        if (at >= tokens.size()) {
            throw error("unexpected end");
        }
        return tokens.get(at++);
    }

    private void expect(String t) {
        if (!t.equals(peek())) {
            throw error("expected '" + t + "', found '" + peek() + "'");
        }
        at++;
    }

    private static int precedence(String op) {
        return switch (op == null ? "" : op) {
            case "or" -> 1;
            case "and", "unless" -> 2;
            case "==", "!=", ">", "<", ">=", "<=" -> 3;
            case "+", "-" -> 4;
            case "*", "/", "%" -> 5;
            case "^" -> 6;
            default -> -1;
        };
    }

    /** Precedence climbing; ^ is right-associative. */
    private void expr(int min) {
        unary();
        while (precedence(peek()) >= Math.max(min, 1)) {
            String op = next();
            int p = precedence(op);
            if ("bool".equals(peek())) {
                next();
            }
            if ("on".equals(peek()) || "ignoring".equals(peek())) {
                next();
                labels();
                if ("group_left".equals(peek()) || "group_right".equals(peek())) {
                    next();
                    if ("(".equals(peek())) {
                        labels();
                    }
                }
            }
            expr(op.equals("^") ? p : p + 1);
        }
    }

    private void unary() {
        if ("-".equals(peek()) || "+".equals(peek())) {
            next();
        }
        primary();
        postfix();
    }

    private void postfix() {
        while (true) {
            if ("[".equals(peek())) {
                next();
                duration();
                if (":".equals(peek())) {
                    next();
                    if (!"]".equals(peek())) {
                        duration();
                    }
                }
                expect("]");
            } else if ("offset".equals(peek())) {
                next();
                if ("-".equals(peek())) {
                    next();
                }
                duration();
            } else {
                return;
            }
        }
    }

    private void duration() {
        if (!"dur".equals(kind()) && !("num".equals(kind()) && peek().matches("[0-9]+"))) {
            throw error("expected a duration, found '" + peek() + "'");
        }
        next();
    }

    private void primary() {
        String t = peek();
        String k = kind();
        if (t == null) {
            throw error("unexpected end");
        }
        if ("num".equals(k) || "str".equals(k)) {
            next();
        } else if ("(".equals(t)) {
            next();
            expr(0);
            expect(")");
        } else if ("{".equals(t)) {
            matchers();
        } else if ("id".equals(k) && AGGREGATIONS.contains(t) && isCall()) {
            next();
            if ("by".equals(peek()) || "without".equals(peek())) {
                next();
                labels();
            }
            args();
            if ("by".equals(peek()) || "without".equals(peek())) {
                next();
                labels();
            }
        } else if ("id".equals(k) && "(".equals(at + 1 < tokens.size() ? tokens.get(at + 1) : null)) {
            if (!FUNCTIONS.contains(t)) {
                throw error("unknown function " + t);
            }
            next();
            args();
        } else if ("id".equals(k) && !KEYWORDS.contains(t)) {
            metrics.add(next());
            if ("{".equals(peek())) {
                matchers();
            }
        } else {
            throw error("unexpected '" + t + "'");
        }
    }

    private boolean isCall() {
        String n = at + 1 < tokens.size() ? tokens.get(at + 1) : null;
        return "(".equals(n) || "by".equals(n) || "without".equals(n);
    }

    private void args() {
        expect("(");
        if (!")".equals(peek())) {
            expr(0);
            while (",".equals(peek())) {
                next();
                expr(0);
            }
        }
        expect(")");
    }

    private void labels() {
        expect("(");
        while (!")".equals(peek())) {
            if (!"id".equals(kind())) {
                throw error("expected a label name, found '" + peek() + "'");
            }
            next();
            if (",".equals(peek())) {
                next();
            } else if (!")".equals(peek())) {
                throw error("expected ',' or ')'");
            }
        }
        next();
    }

    private void matchers() {
        expect("{");
        while (!"}".equals(peek())) {
            if (!"id".equals(kind())) {
                throw error("expected a label name, found '" + peek() + "'");
            }
            String label = next();
            String op = next();
            if (!Set.of("=", "!=", "=~", "!~").contains(op)) {
                throw error("bad matcher operator " + op);
            }
            if (!"str".equals(kind())) {
                throw error("expected a string, found '" + peek() + "'");
            }
            String value = next();
            if (op.endsWith("~")) {
                Pattern.compile(unquote(value)); // Prometheus refuses a bad RE2; Java's is close enough for these
            }
            if (label.equals("__name__") && op.equals("=")) {
                metrics.add(unquote(value));
            }
            if (",".equals(peek())) {
                next();
            } else if (!"}".equals(peek())) {
                throw error("expected ',' or '}'");
            }
        }
        next();
    }

    private static String unquote(String s) {
        String body = s.substring(1, s.length() - 1);
        return s.startsWith("`") ? body : body.replaceAll("\\\\(.)", "$1");
    }
}
