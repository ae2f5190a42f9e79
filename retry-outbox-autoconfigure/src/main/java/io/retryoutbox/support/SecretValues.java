package io.retryoutbox.support;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.MatchResult;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;

/**
 * Recognizes names whose values are secrets (headers such as {@code Authorization}, JSON
 * members such as {@code access_token}) and masks such values in text, so that they are
 * neither shown nor stored.
 */
public final class SecretValues {

	/**
	 * What a secret value is replaced with.
	 */
	public static final String MASK = "******";

	private static final Set<String> SECRET_NAMES = Set.of("authorization", "proxy-authorization", "cookie",
			"set-cookie");

	private static final Set<String> SECRET_PARTS = Set.of("token", "secret", "password", "key");

	private static final Pattern JSON_MEMBER = Pattern
		.compile("\"((?:[^\"\\\\]|\\\\.){1,200})\"(\\s*:\\s*)\"((?:[^\"\\\\]|\\\\.)*)\"");

	private static final Pattern FORM_PAIR = Pattern.compile("(?<=^|[&?\\s])([A-Za-z0-9_.-]{1,200})=([^&\\s]*)");

	private static final Pattern CREDENTIALS = Pattern.compile("(?i)\\b(Bearer|Basic|Digest)\\s+[A-Za-z0-9._~+/=-]+");

	private SecretValues() {
	}

	/**
	 * Whether the value of a header or member with this name is a secret:
	 * {@code Authorization}, {@code Proxy-Authorization}, {@code Cookie},
	 * {@code Set-Cookie} and any name containing {@code token}, {@code secret},
	 * {@code password} or {@code key}, except {@code Idempotency-Key}.
	 * @param name the name, in any case
	 * @return whether its value must be masked
	 */
	public static boolean isSecretName(String name) {
		String lower = name.toLowerCase(Locale.ROOT);
		if (lower.equals("idempotency-key")) {
			return false;
		}
		if (SECRET_NAMES.contains(lower)) {
			return true;
		}
		for (String part : SECRET_PARTS) {
			if (lower.contains(part)) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Masks what looks secret in a text such as an error response body: the values of
	 * JSON members and form fields with a secret name, and credentials after
	 * {@code Bearer}, {@code Basic} or {@code Digest}.
	 * @param text the text
	 * @return the text with those values replaced by {@link #MASK}
	 */
	public static String mask(String text) {
		String masked = replace(JSON_MEMBER, text, (m) -> isSecretName(m.group(1))
				? "\"" + m.group(1) + "\"" + m.group(2) + "\"" + MASK + "\"" : m.group());
		masked = replace(FORM_PAIR, masked, (m) -> isSecretName(m.group(1)) ? m.group(1) + "=" + MASK : m.group());
		return CREDENTIALS.matcher(masked).replaceAll((m) -> m.group(1) + " " + MASK);
	}

	/**
	 * Turns the start of an error body into text to keep: decoded as UTF-8 (invalid bytes
	 * replaced), masked, without NUL characters, and cut to at most {@code maxBytes}
	 * bytes of UTF-8 without splitting a character.
	 * @param body the body
	 * @param maxBytes the largest size of the result in UTF-8
	 * @return the snippet, or {@code null} if the body is empty or nothing may be kept
	 */
	public static @Nullable String snippet(byte[] body, int maxBytes) {
		if (body.length == 0 || maxBytes <= 0) {
			return null;
		}
		String text = mask(decode(body).replace("\u0000", ""));
		byte[] utf8 = text.getBytes(StandardCharsets.UTF_8);
		if (utf8.length <= maxBytes) {
			return text;
		}
		CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.IGNORE);
		CharBuffer out = CharBuffer.allocate(maxBytes);
		decoder.decode(ByteBuffer.wrap(utf8, 0, maxBytes), out, true);
		return out.flip().toString();
	}

	private static String decode(byte[] body) {
		try {
			return StandardCharsets.UTF_8.newDecoder()
				.onMalformedInput(CodingErrorAction.REPLACE)
				.onUnmappableCharacter(CodingErrorAction.REPLACE)
				.decode(ByteBuffer.wrap(body))
				.toString();
		}
		catch (CharacterCodingException ex) {
			return new String(body, StandardCharsets.UTF_8);
		}
	}

	private static String replace(Pattern pattern, String text, Function<MatchResult, String> by) {
		return pattern.matcher(text).replaceAll((m) -> Matcher.quoteReplacement(by.apply(m)));
	}

}
