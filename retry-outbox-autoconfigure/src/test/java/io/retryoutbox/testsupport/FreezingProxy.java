package io.retryoutbox.testsupport;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP proxy whose open connections can be frozen: they stay open, but nothing passes
 * either way any more, as when a NAT entry is dropped or a database fails over without a
 * reset. Connections opened later pass again.
 */
public final class FreezingProxy implements AutoCloseable {

	private final ServerSocket server;

	private final String targetHost;

	private final int targetPort;

	private final List<Link> links = new CopyOnWriteArrayList<>();

	private final AtomicInteger accepted = new AtomicInteger();

	public FreezingProxy(String targetHost, int targetPort) throws IOException {
		this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
		this.targetHost = targetHost;
		this.targetPort = targetPort;
		Thread acceptor = new Thread(this::accept, "freezing-proxy");
		acceptor.setDaemon(true);
		acceptor.start();
	}

	public int port() {
		return this.server.getLocalPort();
	}

	/**
	 * How many connections the proxy accepted so far.
	 * @return the count
	 */
	public int accepted() {
		return this.accepted.get();
	}

	/**
	 * Stops every open connection passing anything, without closing it.
	 */
	public void freezeOpenConnections() {
		this.links.forEach((link) -> link.frozen = true);
	}

	private void accept() {
		while (!this.server.isClosed()) {
			try {
				Socket client = this.server.accept();
				Socket target = new Socket(this.targetHost, this.targetPort);
				Link link = new Link(client, target);
				this.links.add(link);
				this.accepted.incrementAndGet();
				pump(link, client, target);
				pump(link, target, client);
			}
			catch (IOException ex) {
				return;
			}
		}
	}

	private static void pump(Link link, Socket from, Socket to) {
		Thread thread = new Thread(() -> {
			byte[] buffer = new byte[8192];
			try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
				for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
					if (!link.frozen) {
						out.write(buffer, 0, n);
						out.flush();
					}
				}
			}
			catch (IOException ex) {
				// The other side closed.
			}
		}, "freezing-proxy-pump");
		thread.setDaemon(true);
		thread.start();
	}

	@Override
	public void close() throws IOException {
		this.server.close();
		for (Link link : this.links) {
			link.client.close();
			link.target.close();
		}
	}

	private static final class Link {

		private final Socket client;

		private final Socket target;

		private volatile boolean frozen;

		Link(Socket client, Socket target) {
			this.client = client;
			this.target = target;
		}

	}

}
