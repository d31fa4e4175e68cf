package cuadra;

import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;
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
 *
 * <p>The same holds for a unique index of several keys (issue 33): mongo-java-server answers one only for
 * plain equality on exactly its keys (its issue #80), so a workspace's ledger window
 * {@code {workspace, seq: {$in: [500 positions]}}} walked every tenant's entries. When the query names
 * every key of a unique index, all but one as plain values and that one as plain values or
 * {@code {$in: [plain values]}}, each combination is looked up in the index by equality, and the rest of
 * the query is matched on the union of what they found: the index keys are not matched again — each
 * document found holds exactly one of the combinations asked (that is what an equality lookup of a unique
 * index answers), and matching {@code seq: {$in: [500 positions]}} again on each of the 500 documents found
 * compared every document with every position (250,000 comparisons per ledger window; issue 33).
 */
final class IdLookup {

    private static final String ID = "_id";

    private IdLookup() {
    }

    /**
     * What an index found for a query: the positions of a superset of its answer, and the part of the
     * query still to be matched on those documents.
     */
    record Found<P>(Iterable<P> positions, Document rest) {
    }

    /**
     * The positions an index gives for this query (the {@code _id} index for its {@code _id}, or a unique
     * index for all its keys) and what is left to match on them, or null when the query is not such a case.
     */
    static <P> Found<P> positions(Document query, String idField, List<Index<P>> indexes) {
        if (query == null || query.size() <= 1) {
            return null;
        }
        if (!ID.equals(idField) || !query.containsKey(ID)) {
            return uniqueKeysPositions(query, indexes);
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
                return new Found<>(index.getPositions(idOnly), query);
            }
        }
        return null;
    }

    /**
     * The positions a unique index of one or more keys gives for the query's values of those keys (one of
     * them may be an {@code $in}), or null when no unique index's keys are all in the query in that form.
     */
    private static <P> Found<P> uniqueKeysPositions(Document query, List<Index<P>> indexes) {
        for (Index<P> index : indexes) {
            if (!index.isUnique()) continue;
            List<String> keys = index.getKeys().stream().map(IndexKey::getKey).toList();
            String inKey = null;
            boolean usable = true;
            for (String key : keys) {
                if (!query.containsKey(key)) {
                    usable = false;
                    break;
                }
                Object value = query.get(key);
                if (isPlain(value)) continue;
                if (inKey == null && isPlainIn(value)) {
                    inKey = key;
                    continue;
                }
                usable = false;
                break;
            }
            if (!usable) continue;
            Document equality = new Document();
            for (String key : keys) {
                if (!key.equals(inKey)) equality.put(key, query.get(key));
            }
            Collection<?> values = inKey == null ? Collections.singletonList(null)
                : (Collection<?>) ((Document) query.get(inKey)).get("$in");
            Set<P> found = new LinkedHashSet<>();
            for (Object value : values) {
                Document lookup = new Document(equality);
                if (inKey != null) lookup.put(inKey, value);
                // A sparse index does not hold documents without its keys; its answer for all-null keys is not the collection's.
                if (!index.canHandle(lookup)) {
                    usable = false;
                    break;
                }
                for (P position : index.getPositions(lookup)) found.add(position);
            }
            if (usable) {
                Document rest = new Document(query);
                keys.forEach(rest::remove);
                return new Found<>(found, rest);
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
