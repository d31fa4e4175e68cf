package cuadra;

import java.io.BufferedWriter;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.Map;

import de.bwaldvogel.mongo.bson.Document;

/**
 * The scan detector (issue 33): with {@code --report-scans <file>} the launcher appends one JSON line to
 * that file for every query it answers by walking a whole collection — the collection, the command that
 * asked (find, update, aggregate, …), the filter's shape with every value elided, the sort's and (for an
 * aggregate) the pipeline's shape, and how many documents the walk examined (the collection's size).
 *
 * <p>mongo-java-server 1.47 answers a query from an index only when {@code Index.canHandle} takes it (its
 * keys exactly the query's, plain equality) or when {@link IdLookup} finds positions for it; everything
 * else goes through the collection's {@code matchDocuments(query, orderBy, …)} without positions, which
 * reads every document — that is the one place a scan happens, and where {@link #scanned} is called (an
 * aggregate starts from {@code queryAll()}, the same walk with an empty query). For tests and benches
 * only: off (the default), {@link #on} is one read of a static field.
 */
final class ScanReport {

    /** Null while off. */
    private static volatile Writer out;

    /** The command being answered on this thread (commands run to the end on one netty thread). */
    private static final ThreadLocal<Asked> ASKED = new ThreadLocal<>();

    private record Asked(String database, String command, Document body) {
    }

    private ScanReport() {
    }

    static void open(String file) throws IOException {
        out = new BufferedWriter(new OutputStreamWriter(new FileOutputStream(file, true), StandardCharsets.UTF_8));
    }

    static boolean on() {
        return out != null;
    }

    /** Notes the command this thread answers until {@link #done}. */
    static void asked(String database, String command, Document body) {
        ASKED.set(new Asked(database, command, body));
    }

    static void done() {
        ASKED.remove();
    }

    /** One walk of {@code database.collection} for {@code filter}, {@code examined} documents read. */
    static void scanned(String database, String collection, Document filter, Document orderBy, int examined) {
        Writer writer = out;
        if (writer == null) return;
        Asked asked = ASKED.get();
        StringBuilder line = new StringBuilder(256);
        line.append("{\"t\":").append(System.currentTimeMillis());
        line.append(",\"db\":");
        string(line, database);
        line.append(",\"collection\":");
        string(line, collection);
        line.append(",\"command\":");
        string(line, asked == null ? "internal" : asked.command());
        line.append(",\"filter\":");
        shape(line, filter);
        if (orderBy != null && !orderBy.isEmpty()) {
            line.append(",\"sort\":");
            shape(line, orderBy);
        }
        if (asked != null && "aggregate".equalsIgnoreCase(asked.command()) && asked.body().get("pipeline") != null) {
            line.append(",\"pipeline\":");
            shape(line, asked.body().get("pipeline"));
        }
        line.append(",\"examined\":").append(examined).append("}\n");
        synchronized (ScanReport.class) {
            try {
                writer.write(line.toString());
                writer.flush();
            } catch (IOException e) {
                System.err.println("mongo-launcher: cannot write the scan report: " + e);
            }
        }
    }

    /**
     * A value's shape: documents keep their keys (field names and operators), arrays of documents keep
     * each element's shape, and every other value — numbers, strings, dates, ids, lists of them — is "?".
     */
    private static void shape(StringBuilder line, Object value) {
        if (value instanceof Document document) {
            line.append('{');
            boolean first = true;
            for (Map.Entry<String, Object> entry : document.entrySet()) {
                if (!first) line.append(',');
                first = false;
                string(line, entry.getKey());
                line.append(':');
                if (entry.getKey().equals("$sort") || entry.getKey().equals("$project")) {
                    shapeKeysOnly(line, entry.getValue());
                } else {
                    shape(line, entry.getValue());
                }
            }
            line.append('}');
        } else if (value instanceof Collection<?> values && values.stream().anyMatch(v -> v instanceof Document)) {
            line.append('[');
            boolean first = true;
            for (Object element : values) {
                if (!first) line.append(',');
                first = false;
                shape(line, element);
            }
            line.append(']');
        } else {
            line.append("\"?\"");
        }
    }

    /** A sort or projection: its field names matter, its values (1, -1) say little. */
    private static void shapeKeysOnly(StringBuilder line, Object value) {
        if (!(value instanceof Document document)) {
            shape(line, value);
            return;
        }
        line.append('[');
        boolean first = true;
        for (String key : document.keySet()) {
            if (!first) line.append(',');
            first = false;
            string(line, key);
        }
        line.append(']');
    }

    private static void string(StringBuilder line, String text) {
        line.append('"');
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '"' || c == '\\') line.append('\\').append(c);
            else if (c < 0x20) line.append(String.format("\\u%04x", (int) c));
            else line.append(c);
        }
        line.append('"');
    }
}
