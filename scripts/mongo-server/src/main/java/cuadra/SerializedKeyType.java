package cuadra;

import org.h2.mvstore.type.ObjectDataType;

import de.bwaldvogel.mongo.backend.KeyValue;

/**
 * The key type of the H2 store's unique indexes: H2's own {@link ObjectDataType}, in the same order
 * and the same file format, without serializing both keys again on every comparison.
 *
 * <p>Why (issue 33): mongo-java-server keeps a unique index as an {@code MVMap<KeyValue, position>}
 * opened with H2's default key type. {@code KeyValue} is neither a type H2 knows nor
 * {@code Comparable}, so H2 orders such keys by their Java-serialized bytes and, to compare two,
 * serializes both with a fresh {@code ObjectOutputStream} — every step of every B-tree search. One
 * lookup in a 100,000-key index is ~17 comparisons, ~34 serializations; a ledger window of 500
 * positions, ~17,000. Sampled with jstack under 16 connections of heavy reads, most of the store's
 * busy threads were in those serializations (the store spent more CPU per heavy read than any service).
 *
 * <p>Here two {@code KeyValue}s are compared on the same bytes by the same unsigned byte order
 * ({@link ObjectDataType#compareNotNull}), so the order is exactly H2's and existing files read as
 * before; what changes is that a key's bytes are serialized once and then remembered by identity in a
 * small per-thread table (the search key for the whole search, a page's keys while they are hot).
 * A {@code KeyValue} is immutable (a final list, no setter), so the bytes remembered for an object stay
 * its bytes; an entry is replaced when another key hashes to its slot, and holds its key strongly, so an
 * identity is never reused while remembered. Anything but two {@code KeyValue}s goes to H2 as before;
 * reading and writing are H2's.
 */
final class SerializedKeyType extends ObjectDataType {

    /** Keys remembered per thread (a power of two): the upper B-tree levels and a search's path fit. */
    private static final int REMEMBERED = 4096;

    private static final ThreadLocal<Remembered> REMEMBERED_BYTES = ThreadLocal.withInitial(Remembered::new);

    /** A direct-mapped table from a key object (by identity) to its serialized bytes. */
    private static final class Remembered {
        final Object[] keys = new Object[REMEMBERED];
        final byte[][] bytes = new byte[REMEMBERED][];

        byte[] of(Object key) {
            int slot = System.identityHashCode(key) & (REMEMBERED - 1);
            if (keys[slot] == key) {
                return bytes[slot];
            }
            byte[] serialized = ObjectDataType.serialize(key);
            keys[slot] = key;
            bytes[slot] = serialized;
            return serialized;
        }
    }

    @Override
    public int compare(Object a, Object b) {
        // KeyValue is final: exactly the class H2 serializes to compare (it is neither a known type nor Comparable).
        if (a instanceof KeyValue && b instanceof KeyValue) {
            if (a == b) {
                return 0;
            }
            Remembered remembered = REMEMBERED_BYTES.get();
            return ObjectDataType.compareNotNull(remembered.of(a), remembered.of(b));
        }
        return super.compare(a, b);
    }
}
