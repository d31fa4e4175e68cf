package cuadra;

import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.CursorRegistry;
import de.bwaldvogel.mongo.backend.QueryResult;
import de.bwaldvogel.mongo.backend.memory.MemoryBackend;
import de.bwaldvogel.mongo.backend.memory.MemoryCollection;
import de.bwaldvogel.mongo.backend.memory.MemoryDatabase;
import de.bwaldvogel.mongo.bson.Document;
import io.netty.channel.Channel;

/**
 * The memory backend (tests, benches) with the same {@code _id} lookup as the H2 store ({@link IdLookup}):
 * without it a conditional update such as the Idempotency-Key's {@code {_id, state, run}} scanned the
 * whole collection here while production answered it from the index, so tests and benches paid, and
 * measured, a cost production does not have.
 */
final class IdLookupMemoryBackend extends MemoryBackend {

    /** Notes the command for the scan detector ({@link ScanReport}) while it is answered. */
    @Override
    public Document handleCommand(Channel channel, String database, String command, Document query) {
        if (!ScanReport.on()) return super.handleCommand(channel, database, command, query);
        ScanReport.asked(database, command, query);
        try {
            return super.handleCommand(channel, database, command, query);
        } finally {
            ScanReport.done();
        }
    }

    @Override
    public MemoryDatabase openOrCreateDatabase(String databaseName) {
        return new Database(databaseName, getCursorRegistry());
    }

    /** No fields of its own: AbstractMongoDatabase's constructor already opens collections through it. */
    private static final class Database extends MemoryDatabase {
        Database(String databaseName, CursorRegistry cursorRegistry) {
            super(databaseName, cursorRegistry);
        }

        @Override
        protected MemoryCollection openOrCreateCollection(String collectionName, CollectionOptions options) {
            return new Collection(this, collectionName, options, cursorRegistry);
        }
    }

    private static final class Collection extends MemoryCollection {
        Collection(MongoDatabase database, String collectionName, CollectionOptions options, CursorRegistry cursorRegistry) {
            super(database, collectionName, options, cursorRegistry);
        }

        @Override
        protected QueryResult queryDocuments(Document query, Document orderBy, int skip, int limit, int batchSize,
                                             Document projection) {
            IdLookup.Found<Integer> found = IdLookup.positions(query, getIdField(), getIndexes());
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
}
