package cuadra;

import java.util.Collection;
import java.util.List;
import java.util.regex.Pattern;

import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.bson.BsonRegularExpression;
import de.bwaldvogel.mongo.bson.Document;

/**
 * When a query with {@code _id} <em>and</em> other fields can use the {@code _id} index. mongo-java-server
 * 1.47 uses an index only when the query's keys are exactly the index's keys, so {@code {_id, workspace}}
 * or {@code {_id, status}} (every workspace-sealed read and every conditional state change) scanned the
 * whole collection, on both backends.
 *
 * <p>When {@code _id} is a plain value or {@code {$in: [plain values]}}, the {@code _id} index gives the
 * positions of {@code {_id: that}} alone (a superset of the answer); the collection then matches the FULL
 * query on those documents only, through the same {@code matchDocuments(query, positions, …)} its index
 * path uses, so sort, skip, limit and projection are unchanged. For any other query this answers null and
 * the collection goes to mongo-java-server's own {@code queryDocuments}. Used by
 * {@link IdLookupH2Collection} and {@link IdLookupMemoryBackend}'s collection.
 */
final class IdLookup {

    private static final String ID = "_id";

    private IdLookup() {
    }

    /** The {@code _id} index's positions for this query's {@code _id} alone, or null when the query is not such a case. */
    static <P> Iterable<P> positions(Document query, String idField, List<Index<P>> indexes) {
        if (query == null || query.size() <= 1 || !ID.equals(idField) || !query.containsKey(ID)) {
            return null;
        }
        Object id = query.get(ID);
        if (!isPlain(id) && !isPlainIn(id)) {
            return null;
        }
        Document idOnly = new Document(ID, id);
        for (Index<P> index : indexes) {
            // canHandle requires the index's keys to be exactly {_id}: only the _id (or another unique
            // _id) index answers here.
            if (index.canHandle(idOnly)) {
                return index.getPositions(idOnly);
            }
        }
        return null;
    }

    /** An equality value the index and the matcher treat alike: not null, a sub-document, an array or a pattern. */
    private static boolean isPlain(Object value) {
        return value != null && !(value instanceof Document) && !(value instanceof Collection<?>)
            && !(value instanceof Object[]) && !(value instanceof Pattern)
            && !BsonRegularExpression.isRegularExpression(value);
    }

    private static boolean isPlainIn(Object value) {
        if (!(value instanceof Document document) || document.size() != 1
            || !(document.get("$in") instanceof Collection<?> values)) {
            return false;
        }
        for (Object element : values) {
            if (!isPlain(element)) return false;
        }
        return true;
    }
}
