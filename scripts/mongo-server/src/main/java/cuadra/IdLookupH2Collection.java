package cuadra;

import org.h2.mvstore.MVMap;

import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.QueryResult;
import de.bwaldvogel.mongo.backend.h2.H2Collection;
import de.bwaldvogel.mongo.bson.Document;

/**
 * mongo-java-server's H2 collection, except that a query with {@code _id} <em>and</em> other fields
 * uses the {@code _id} index ({@link IdLookup} says when and why). Callers hold the collection's lock
 * ({@code AbstractSynchronizedMongoCollection}'s synchronized methods), as for the original method.
 */
final class IdLookupH2Collection extends H2Collection {

    IdLookupH2Collection(MongoDatabase database, String collectionName, CollectionOptions options,
                         MVMap<Object, Document> dataMap, MVMap<String, Object> metaMap, CursorRegistry cursorRegistry) {
        super(database, collectionName, options, dataMap, metaMap, cursorRegistry);
    }

    @Override
    protected QueryResult queryDocuments(Document query, Document orderBy, int skip, int limit, int batchSize,
                                         Document projection) {
        IdLookup.Found<Object> found = IdLookup.positions(query, getIdField(), getIndexes());
        if (found != null) {
            return matchDocuments(found.rest(), found.positions(), orderBy, skip, limit, batchSize, projection);
        }
        return super.queryDocuments(query, orderBy, skip, limit, batchSize, projection);
    }

    /** The walk of every document (no index answered): reported when the scan detector is on ({@link ScanReport}). */
    @Override
    protected QueryResult matchDocuments(Document query, Document orderBy, int skip, int limit, int batchSize,
                                         Document projection) {
        if (ScanReport.on()) ScanReport.scanned(getDatabaseName(), getCollectionName(), query, orderBy, count());
        return super.matchDocuments(query, orderBy, skip, limit, batchSize, projection);
    }
}
