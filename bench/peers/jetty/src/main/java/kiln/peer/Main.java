package kiln.peer;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.ContextHandler;
import org.eclipse.jetty.server.handler.ResourceHandler;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.resource.ResourceFactory;

/**
 * Jetty 12 peer for the kiln benchmark suite: /pong and /hello from a core Handler,
 * /static/ from Jetty's ResourceHandler. Reads PORT and STATIC_DIR.
 */
public final class Main {
    private Main() {}

    /** The fixed answers, encoded once. */
    static final class Texts extends Handler.Abstract.NonBlocking {
        private static final ByteBuffer PONG = bytes("PONG");
        private static final ByteBuffer HELLO = bytes("Hello World!");

        private static ByteBuffer bytes(String text) {
            return ByteBuffer.wrap(text.getBytes(StandardCharsets.US_ASCII)).asReadOnlyBuffer();
        }

        @Override
        public boolean handle(Request request, Response response, Callback callback) {
            ByteBuffer body;
            switch (Request.getPathInContext(request)) {
                case "/pong" -> body = PONG;
                case "/hello" -> body = HELLO;
                default -> {
                    return false;
                }
            }
            response.setStatus(200);
            response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/plain");
            response.getHeaders().put(HttpHeader.CONTENT_LENGTH, body.remaining());
            response.write(true, body.slice(), callback);
            return true;
        }
    }

    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(System.getenv().getOrDefault("PORT", "8080"));
        Path staticDir = Path.of(System.getenv().getOrDefault("STATIC_DIR", "static")).toAbsolutePath();

        Server server = new Server();
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        connector.setPort(port);
        connector.setAcceptQueueSize(4096);
        server.addConnector(connector);

        ResourceHandler files = new ResourceHandler();
        files.setBaseResource(ResourceFactory.of(server).newResource(staticDir));
        files.setDirAllowed(false);
        ContextHandler statics = new ContextHandler(files, "/static");

        // Each handler in turn until one answers; none answering is Jetty's 404.
        server.setHandler(new Handler.Sequence(statics, new Texts()));
        server.setStopAtShutdown(true);
        server.start();
        server.join();
    }
}
