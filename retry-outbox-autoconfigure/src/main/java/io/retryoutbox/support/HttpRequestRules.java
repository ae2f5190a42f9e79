package io.retryoutbox.support;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * What makes a stored request sendable: a method and header names that are HTTP tokens,
 * header values without line breaks, and a path relative to the destination's base URL.
 * Checked at enqueue and again before each attempt, since a row can be edited in between.
 * Each check throws {@link IllegalArgumentException} with a message naming the problem.
 */
public final class HttpRequestRules {

	private static final String PROBE_HOST = "retry-outbox.invalid";

	// Hop-by-hop and framing headers (RFC 9110, 9112), and Host: the HTTP client sets
	// them from the destination and the body; a stored value could smuggle a request or
	// name another host.
	private static final Set<String> CONNECTION_HEADERS = Set.of("host", "content-length", "transfer-encoding",
			"connection", "keep-alive", "upgrade", "te", "trailer");

	private HttpRequestRules() {
	}

	/**
	 * Checks a whole request.
	 * @param method the HTTP method
	 * @param path the path, relative to the destination's base URL
	 * @param headers the headers
	 */
	public static void check(String method, String path, Map<String, List<String>> headers) {
		checkMethod(method);
		checkPath(path);
		headers.forEach(HttpRequestRules::checkHeader);
	}

	/**
	 * Checks that a method is an HTTP token.
	 * @param method the method
	 */
	public static void checkMethod(String method) {
		if (!isToken(method)) {
			throw new IllegalArgumentException("Method '" + printable(method) + "' is not a valid HTTP method");
		}
	}

	/**
	 * Checks that a path stays relative to the destination's base URL.
	 * @param path the path
	 */
	public static void checkPath(String path) {
		if (path.startsWith("//") || path.contains("://") || hasScheme(path)) {
			throw new IllegalArgumentException("Path '" + printable(path)
					+ "' must be relative to the destination's base URL, not an absolute URL");
		}
		if (hasDotSegment(path)) {
			throw new IllegalArgumentException("Path '" + printable(path)
					+ "' must not contain a dot segment ('.' or '..', also percent-encoded): it could climb out of "
					+ "the destination's base path");
		}
		if (isPlain(path)) {
			return;
		}
		try {
			URI uri = new URI("http://" + PROBE_HOST + normalizePath(path));
			if (!PROBE_HOST.equals(uri.getHost())) {
				throw new IllegalArgumentException("Path '" + printable(path) + "' must not name a host");
			}
		}
		catch (URISyntaxException ex) {
			throw new IllegalArgumentException(
					"Path '" + printable(path) + "' is not a valid URI path: " + ex.getMessage(), ex);
		}
	}

	/**
	 * Checks a header's name and values.
	 * @param name the name
	 * @param values the values
	 */
	public static void checkHeader(String name, List<String> values) {
		if (!isToken(name)) {
			throw new IllegalArgumentException("Header name '" + printable(name) + "' is not a valid HTTP header name");
		}
		String lowerCase = name.toLowerCase(Locale.ROOT);
		if (CONNECTION_HEADERS.contains(lowerCase) || lowerCase.startsWith("proxy-")) {
			throw new IllegalArgumentException("Header '" + name + "' is set by the HTTP client for the connection; "
					+ "a message must not carry it");
		}
		for (String value : values) {
			if (value == null) {
				throw new IllegalArgumentException("Value of header '" + name + "' is missing");
			}
			if (value.indexOf('\r') >= 0 || value.indexOf('\n') >= 0) {
				throw new IllegalArgumentException("Value of header '" + name + "' contains CR or LF");
			}
		}
	}

	/**
	 * The path as it is stored: with a leading slash.
	 * @param path a path relative to the destination's base URL
	 * @return the path, starting with {@code /}
	 */
	public static String normalizePath(String path) {
		return path.startsWith("/") ? path : "/" + path;
	}

	/**
	 * Whether a segment of the path part (before any query) is {@code .} or {@code ..},
	 * also when percent-encoded, which servers and proxies may decode before they resolve
	 * it.
	 */
	private static boolean hasDotSegment(String path) {
		int query = path.indexOf('?');
		int end = (query >= 0) ? query : path.length();
		int start = 0;
		while (start <= end) {
			int slash = path.indexOf('/', start);
			int segmentEnd = (slash >= 0 && slash < end) ? slash : end;
			if (isDotSegment(path, start, segmentEnd)) {
				return true;
			}
			start = segmentEnd + 1;
		}
		return false;
	}

	/**
	 * Whether the segment between the indexes is one or two dots, each written as
	 * {@code .}, {@code %2e} or {@code %2E}. A scan, not a split and a decode: it runs
	 * for every enqueued message (the split cost the enqueuing threads about 2% of their
	 * time in the bench's cost profile).
	 */
	private static boolean isDotSegment(String path, int start, int end) {
		int dots = 0;
		int i = start;
		while (i < end) {
			if (path.charAt(i) == '.') {
				i++;
			}
			else if (i + 2 < end && path.startsWith("%2", i)
					&& (path.charAt(i + 2) == 'e' || path.charAt(i + 2) == 'E')) {
				i += 3;
			}
			else {
				return false;
			}
			dots++;
		}
		return dots == 1 || dots == 2;
	}

	/**
	 * Whether a path holds only unreserved characters, slashes and the query's {@code ?},
	 * {@code &} and {@code =}, and does not start with {@code //}: such a path is a valid
	 * URI path and query under any authority, so it needs no parse (the parse cost the
	 * enqueuing threads about a tenth of their time in the bench's profile).
	 */
	private static boolean isPlain(String path) {
		if (path.startsWith("//")) {
			return false;
		}
		for (int i = 0; i < path.length(); i++) {
			char c = path.charAt(i);
			boolean plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '/'
					|| c == '-' || c == '.' || c == '_' || c == '~' || c == '?' || c == '&' || c == '=';
			if (!plain) {
				return false;
			}
		}
		return true;
	}

	private static boolean hasScheme(String path) {
		int colon = path.indexOf(':');
		int slash = path.indexOf('/');
		return colon > 0 && (slash < 0 || colon < slash) && path.substring(0, colon).matches("[A-Za-z][A-Za-z0-9+.-]*");
	}

	private static String printable(String text) {
		return text.replace("\r", "\\r").replace("\n", "\\n");
	}

	/**
	 * Whether the text is an HTTP token (RFC 9110), in a loop rather than a stream: it
	 * runs for every enqueued message (the stream cost the enqueuing threads about 3% of
	 * their time in the bench's cost profile).
	 */
	private static boolean isToken(String text) {
		if (text.isEmpty()) {
			return false;
		}
		for (int i = 0; i < text.length(); i++) {
			if (!isTokenChar(text.charAt(i))) {
				return false;
			}
		}
		return true;
	}

	private static boolean isTokenChar(char c) {
		return c > 32 && c < 127 && "\"(),/:;<=>?@[\\]{}".indexOf(c) < 0;
	}

}
