package cuadra;

import java.io.File;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CountDownLatch;

import de.bwaldvogel.mongo.MongoBackend;
import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.MongoVersion;
import org.h2.mvstore.MVStore;

import de.bwaldvogel.mongo.backend.h2.H2Backend;

/**
 * Starts a MongoDB wire-protocol server (mongo-java-server) for Cuadra's development
 * runs and tests. Production uses a real MongoDB via MONGO_URL instead.
 *
 * <pre>
 * java -jar mongo-launcher.jar --backend h2|memory [--file path] [--commit sync|timer] [--cache-mb 256]
 *                              [--host 127.0.0.1] [--port 0] [--exit-when-stdin-closes]
 *                              [--report-scans <file>]
 * </pre>
 *
 * Once the socket is bound it prints exactly one line, {@code LISTENING <port>}, to stdout.
 * Everything else (logs, errors) goes to stderr. SIGTERM / SIGINT close the server and the
 * backend (so H2 writes its file) before the JVM exits. With {@code --exit-when-stdin-closes}
 * the same clean shutdown also happens when stdin reaches end of file, which is how a parent
 * that starts this server with a pipe on stdin makes sure it never outlives the parent, even
 * when the parent is killed with SIGKILL. With {@code --report-scans <file>} every query answered by
 * walking a whole collection is appended to that file as a JSON line ({@link ScanReport}; tests and
 * benches only).
 */
public final class MongoLauncher {

    /**
     * Version reported to clients. mongo-java-server's own MONGO_5_0 says wire version 8,
     * which the Node driver used by mongoose 9 refuses (it needs at least 9); 13 is what a
     * real MongoDB 5.0 reports.
     */
    static final class Mongo50 implements MongoVersion {
        @Override
        public List<Integer> getVersionArray() {
            return List.of(5, 0, 0);
        }

        @Override
        public int getWireVersion() {
            return 13;
        }
    }

    private MongoLauncher() {
    }

    private static void usage(String problem) {
        System.err.println("mongo-launcher: " + problem);
        System.err.println(
            "usage: java -jar mongo-launcher.jar --backend h2|memory [--file <path>] [--host 127.0.0.1] [--port <n>]"
                + " [--commit sync|timer] [--cache-mb <n>] [--exit-when-stdin-closes] [--report-scans <file>]");
        System.exit(2);
    }

    public static void main(String[] args) throws Exception {
        // Must be set before the first logger is created. Quiet by default: mongo-java-server
        // logs every client connection at INFO.
        if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        }
        System.setProperty("org.slf4j.simpleLogger.logFile", "System.err");
        System.setProperty("org.slf4j.simpleLogger.showDateTime", "true");

        String backendName = null;
        String file = null;
        String host = "127.0.0.1";
        int port = 0;
        boolean exitWhenStdinCloses = false;
        // sync: a write is answered only once it is on disk (the default); timer: mongo-java-server's own
        // commit about once a second (kept only to measure what durability costs).
        String commit = "sync";
        // H2's page cache (MB of pages kept read and deserialized). H2's default, 16, is far smaller than the
        // indexes a busy workspace's reads walk: every lookup then read pages from the file and deserialized
        // their keys again (bench/h2-id-lookup.ts, a ledger window of 500 positions: 40 ms of CPU with 16,
        // 14 ms with 256; issue 33). Its JVM heap is sized by scripts/infra.ts (mongoMemory): an eighth of
        // the machine for H2, at least 768 MB.
        int cacheMb = 256;
        String reportScans = null;
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (arg.equals("--exit-when-stdin-closes")) {
                exitWhenStdinCloses = true;
                continue;
            }
            if (i + 1 >= args.length) {
                usage("missing value for " + arg);
            }
            String value = args[++i];
            switch (arg) {
                case "--backend" -> backendName = value;
                case "--file" -> file = value;
                case "--host" -> host = value;
                case "--commit" -> commit = value;
                case "--report-scans" -> reportScans = value;
                case "--cache-mb" -> {
                    try {
                        cacheMb = Integer.parseInt(value);
                    } catch (NumberFormatException e) {
                        usage("--cache-mb must be a number, got " + value);
                    }
                }
                case "--port" -> {
                    try {
                        port = Integer.parseInt(value);
                    } catch (NumberFormatException e) {
                        usage("--port must be a number, got " + value);
                    }
                }
                default -> usage("unknown argument " + arg);
            }
        }
        if (port < 0 || port > 65535) {
            usage("--port out of range: " + port);
        }

        if (reportScans != null) {
            if ("timer".equals(commit)) usage("--report-scans needs the project's collections (not --commit timer)");
            ScanReport.open(reportScans);
        }

        MongoBackend backend;
        if ("h2".equals(backendName)) {
            if (file == null || file.isEmpty()) {
                usage("--backend h2 needs --file <path>");
            }
            File parent = new File(file).getAbsoluteFile().getParentFile();
            if (parent != null && !parent.isDirectory() && !parent.mkdirs()) {
                usage("cannot create directory " + parent);
            }
            if ("sync".equals(commit)) {
                backend = new DurableH2Backend(new MVStore.Builder().fileName(file).cacheSize(cacheMb).open());
            } else if ("timer".equals(commit)) {
                backend = new H2Backend(file);
            } else {
                usage("--commit must be sync or timer");
                return;
            }
        } else if ("memory".equals(backendName)) {
            if (file != null) {
                usage("--file only applies to --backend h2");
            }
            backend = new IdLookupMemoryBackend();
        } else {
            usage("--backend must be h2 or memory");
            return;
        }
        backend.version(new Mongo50());

        MongoServer server = new MongoServer(backend);
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                // Closes the listening socket and the client connections, then the backend
                // (for H2: commits and closes the MVStore file).
                server.shutdownNow();
            } catch (Throwable t) {
                System.err.println("mongo-launcher: error during shutdown: " + t);
            } finally {
                stopped.countDown();
            }
        }, "mongo-launcher-shutdown"));

        try {
            server.bind(host, port);
        } catch (Throwable e) {
            // Netty rethrows a checked java.net.BindException undeclared, so MongoServer.bind()
            // skips its own cleanup for it and leaves non-daemon event loop threads running:
            // catch everything and exit explicitly (the shutdown hook closes the backend).
            System.err.println("mongo-launcher: cannot listen on " + host + ":" + port + ": " + e);
            System.exit(1);
        }
        InetSocketAddress address = server.getLocalAddress();
        System.out.println("LISTENING " + address.getPort());
        System.out.flush();

        if (exitWhenStdinCloses) {
            Thread watchdog = new Thread(() -> {
                try {
                    byte[] buffer = new byte[256];
                    while (System.in.read(buffer) >= 0) {
                        // ignore input; only end of file matters
                    }
                } catch (Exception e) {
                    // a broken stdin means the parent is gone, too
                }
                System.err.println("mongo-launcher: stdin closed (parent gone), shutting down");
                System.exit(0);
            }, "mongo-launcher-stdin-watchdog");
            watchdog.setDaemon(true);
            watchdog.start();
        }

        // Netty's event loop threads are non-daemon and keep the JVM alive; park the main
        // thread until the shutdown hook has run so nothing here exits early.
        stopped.await();
    }
}
