package cuadra;

import java.lang.reflect.Constructor;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

import org.h2.mvstore.MVMap;
import org.h2.mvstore.MVStore;

import de.bwaldvogel.mongo.MongoCollection;
import de.bwaldvogel.mongo.MongoDatabase;
import de.bwaldvogel.mongo.backend.CollectionOptions;
import de.bwaldvogel.mongo.backend.Index;
import de.bwaldvogel.mongo.backend.IndexKey;
import de.bwaldvogel.mongo.backend.KeyValue;
import de.bwaldvogel.mongo.backend.h2.H2Backend;
import de.bwaldvogel.mongo.backend.h2.H2Database;
import de.bwaldvogel.mongo.backend.h2.H2UniqueIndex;
import de.bwaldvogel.mongo.bson.Document;
import io.netty.channel.Channel;

/**
 * The H2 backend with durable acknowledgements: a command that writes is answered only after its
 * changes are committed to the MVStore file and synced to disk. mongo-java-server's own H2 backend
 * commits on a timer (about once a second), so a {@code kill -9} lost the writes of its last moment
 * even though they had been acknowledged.
 *
 * <p>Group commit: every write takes a ticket after it is applied; a writer whose ticket is not yet
 * durable commits and syncs everything applied so far (one fsync for all the writers waiting), so
 * concurrent writers share commits instead of queueing one fsync each.
 */
final class DurableH2Backend extends H2Backend {

    /** Commands that change data or metadata (lower case; the wire protocol's names vary in case). */
    private static final Set<String> WRITES = Set.of(
        "insert", "update", "delete", "findandmodify", "create", "createindexes", "drop", "dropindexes",
        "dropdatabase", "renamecollection", "bulkwrite");

    private final MVStore store;
    private final AtomicLong applied = new AtomicLong();
    private final Object commitLock = new Object();
    private long durable = 0;

    DurableH2Backend(MVStore store) {
        super(store);
        this.store = store;
    }

    @Override
    public Document handleCommand(Channel channel, String database, String command, Document query) {
        boolean writes = WRITES.contains(command.toLowerCase(Locale.ROOT));
        boolean reporting = ScanReport.on();
        if (reporting) ScanReport.asked(database, command, query);
        try {
            return super.handleCommand(channel, database, command, query);
        } finally {
            if (reporting) ScanReport.done();
            // Also after a failed write: an ordered insert that stopped at a duplicate key kept the documents before it.
            if (writes) makeDurable(applied.incrementAndGet());
        }
    }

    @Override
    protected MongoDatabase openOrCreateDatabase(String databaseName) {
        return new IdLookupH2Database(databaseName);
    }

    /**
     * H2's database, making {@link IdLookupH2Collection}s. Map names as in H2Database 1.47
     * ({@code databases.<ns>}, {@code meta.<ns>}). An inner class on purpose: H2Database's constructor
     * already opens the existing collections, before a field of a subclass would be set, while the
     * outer instance (and H2Backend's store, set before any database is opened) is already there.
     */
    private final class IdLookupH2Database extends H2Database {
        IdLookupH2Database(String databaseName) {
            super(databaseName, getMvStore(), getCursorRegistry());
        }

        @Override
        protected MongoCollection<Object> openOrCreateCollection(String collectionName, CollectionOptions options) {
            String namespace = getFullCollectionNamespace(collectionName);
            MVStore mvStore = DurableH2Backend.this.getMvStore();
            return new IdLookupH2Collection(this, collectionName, options, mvStore.openMap("databases." + namespace),
                mvStore.openMap("meta." + namespace), cursorRegistry);
        }

        /**
         * H2Database 1.47's unique index (map {@code <ns>._index_<name>}), its keys compared by
         * {@link SerializedKeyType}: the same order and file format, without re-serializing both keys at
         * every step of a search.
         */
        @Override
        protected Index<Object> openOrCreateUniqueIndex(String collectionName, String indexName, List<IndexKey> keys, boolean sparse) {
            MVMap<KeyValue, Object> map = DurableH2Backend.this.getMvStore().openMap(
                getFullCollectionNamespace(collectionName) + "._index_" + indexName,
                new MVMap.Builder<KeyValue, Object>().keyType(KEY_TYPE));
            try {
                return UNIQUE_INDEX.newInstance(map, indexName, keys, sparse);
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException("cannot open the unique index " + indexName, e);
            }
        }
    }

    private static final SerializedKeyType KEY_TYPE = new SerializedKeyType();

    /** H2UniqueIndex's constructor is package-private in 1.47; the class itself is what we want unchanged. */
    private static final Constructor<H2UniqueIndex> UNIQUE_INDEX;

    static {
        try {
            UNIQUE_INDEX = H2UniqueIndex.class.getDeclaredConstructor(MVMap.class, String.class, List.class, boolean.class);
            UNIQUE_INDEX.setAccessible(true);
        } catch (NoSuchMethodException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** Returns once every write up to {@code ticket} is committed and synced. */
    private void makeDurable(long ticket) {
        synchronized (commitLock) {
            if (durable >= ticket) {
                return; // another writer's commit already covered this one
            }
            long upTo = applied.get();
            store.commit();
            store.sync();
            durable = upTo;
        }
    }
}
