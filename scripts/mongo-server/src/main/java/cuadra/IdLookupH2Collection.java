package cuadra;

import java.util.Collection;
import java.util.regex.Pattern;

import org.h2.mvstore.MVMap;

import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.QueryResult;
import de.bwaldvogel.mongo.backend.h2.H2Collection;
import de.bwaldvogel.mongo.bson.BsonRegularExpression;
import de.bwaldvogel.mongo.bson.Document;

/**
 * mongo-java-server's H2 collection, except that a query with {@code _id} <em>and</em> other fields
 * uses the {@code _id} index. mongo-java-server 1.47 uses an index only when the query's keys are
 * exactly the index's keys, so {@code {_id, workspace}} or {@code {_id, status}} (every workspace-sealed
 * read and every conditional state change) scanned the whole collection.
 *
 * <p>Here, when {@code _id} is a plain value or {@code {$in: [plain values]}}, the {@code _id} index
 * gives the positions of {@code {_id: that}} alone (a superset of the answer) and the FULL query is then
 * matched on those documents only, through the same {@code matchDocuments(query, positions, …)} the
 * index path uses: sort, skip, limit and projection are unchanged. Everything else goes to
 * mongo-java-server's own {@code queryDocuments}. Callers hold the collection's lock
 * ({@code AbstractSynchronizedMongoCollection}'s synchronized methods), as for the original method.
 */
final class IdLookupH2Collection extends H2Collection {

    private static final String ID = "_id";

    IdLookupH2Collection(MongoDatabase database, String collectionName, CollectionOptions options,
                         MVMap<Object, Document> dataMap, MVMap<String, Object> metaMap, CursorRegistry cursorRegistry) {
        super(database, collectionName, options, dataMap, metaMap, cursorRegistry);
    }

    @Override
    protected QueryResult queryDocuments(Document query, Document orderBy, int skip, int limit, int batchSize,
                                         Document projection) {
        if (query != null && query.size() > 1 && ID.equals(getIdField()) && query.containsKey(ID)) {
            Object id = query.get(ID);
            if (isPlain(id) || isPlainIn(id)) {
                Document idOnly = new Document(ID, id);
                for (Index<Object> index : getIndexes()) {
                    // canHandle requires the index's keys to be exactly {_id}: only the _id (or another
                    // unique _id) index answers here.
                    if (index.canHandle(idOnly)) {
                        return matchDocuments(query, index.getPositions(idOnly), orderBy, skip, limit, batchSize,
                            projection);
                    }
                }
            }
        }
        return super.queryDocuments(query, orderBy, skip, limit, batchSize, projection);
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
